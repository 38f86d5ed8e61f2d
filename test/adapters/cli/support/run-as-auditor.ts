import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runCli } from './run-cli.js';

/** The result of one CLI run. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const SETPRIV = '/usr/bin/setpriv';
const NOBODY = 65534;

/**
 * Whether runs go through an unprivileged user: the tests run as root (where file modes stop no read and no write),
 * so permission checks need another user; `setpriv` drops to `nobody`. Without root they run in this process, where
 * file modes already apply.
 */
export const auditorIsSeparateUser: boolean = process.getuid?.() === 0 && existsSync(SETPRIV);

/** Whether file modes stop the auditor's reads: not for root without `setpriv` (root reads a mode-000 file). */
export const fileModesApply: boolean = process.getuid?.() !== 0 || auditorIsSeparateUser;

/**
 * Runs CLI invocations as an auditor without privileges: as `nobody` (one spawned process for all of them) when the
 * tests run as root, else in this process. Every directory the runs name must be reachable by that user
 * ({@link letAuditorReach}).
 */
export const runAsAuditor = async (cells: readonly (readonly string[])[]): Promise<CliRun[]> => {
  if (!auditorIsSeparateUser) {
    const out: CliRun[] = [];
    for (const argv of cells) out.push(await runCli(...argv));
    return out;
  }
  const { stdout } = await promisify(execFile)(
    SETPRIV,
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', resolve(ROOT, 'node_modules/.bin/tsx'), resolve(ROOT, 'test/adapters/cli/support/run-cells.ts'), JSON.stringify(cells)],
    { cwd: ROOT, env: { ...process.env, TMPDIR: '/tmp' }, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as CliRun[];
};

/** Lets the auditor user walk down to `path`: adds search (x) permission for others to each directory above it. */
export const letAuditorReach = (path: string): void => {
  for (let d = dirname(resolve(path)); d !== '/' && d !== '/tmp'; d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o005) !== 0o005) chmodSync(d, mode | 0o005);
  }
};
