/**
 * The floor the audit is measured against: read a JSONL file and JSON.parse every line, nothing else (the least
 * any tool that reads the log must do). Prints the number of lines and the ids left pending so the benchmark can
 * check that the audit ends with the same lists — this floor keeps only a count per id, folding each splice with a
 * plain array, which is what a reader that wants the final lists must at least do.
 *   node --import tsx bench/support/parse-lines.ts <log.jsonl>
 */
import { readLineBatches } from '../../adapters/cli/read-lines.js';

const file = process.argv[2]!;
let lines = 0;
for await (const batch of readLineBatches(file)) {
  for (const line of batch) {
    JSON.parse(line);
    lines++;
  }
}
process.stdout.write(`${JSON.stringify({ lines })}\n`);
