// The floor `bench/audit-end-to-end.ts` measures the audit against: read a JSONL file with the audit's own line
// reader and JSON.parse every line, nothing else. Plain JS over dist/ so that it starts like the CLI does.
//   node bench/support/parse-lines.mjs <log.jsonl>
import { readLineBatches } from '../../dist/audit/read-lines.js';

let lines = 0;
for await (const batch of readLineBatches(process.argv[2])) {
  for (const line of batch) {
    JSON.parse(line);
    lines++;
  }
}
process.stdout.write(`${JSON.stringify({ lines })}\n`);
