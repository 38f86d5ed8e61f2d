import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `steerlog <args>` from source (as the browser suite's serve runs) and returns its exit code and output. */
export const steerlog = (args: readonly string[]): { code: number | null; stdout: string; stderr: string } => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'adapters/cli/main.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
