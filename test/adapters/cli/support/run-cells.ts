import { main } from '../../../../adapters/cli/main.js';

/**
 * Runs CLI invocations in this process, one after the other, and prints their results as one JSON array:
 * `tsx run-cells.ts '<JSON array of argv arrays>'`. Spawned by `runAsAuditor` as an unprivileged user.
 */
const cells = JSON.parse(process.argv[2]!) as string[][];
const results: { code: number; stdout: string; stderr: string }[] = [];
for (const argv of cells) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
  results.push({ code, stdout, stderr });
}
process.stdout.write(JSON.stringify(results));
