import { main } from '../../../../adapters/cli/main.js';

/** Runs the CLI in process, as `steerlog <argv…>` would: its exit code and everything it wrote to stdout and stderr. */
export const runCli = async (...argv: string[]): Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }> => {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  return { code, stdout, stderr };
};
