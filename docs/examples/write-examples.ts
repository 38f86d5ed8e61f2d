/** Regenerates docs/examples/*.jsonl and their expected reports: `npx tsx docs/examples/write-examples.ts`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditLines } from '../../domain/audit.js';
import { formatAuditReport } from '../../adapters/cli/format-audit.js';
import { auditFileChain, formatAuditChain } from '../../adapters/cli/audit-chain.js';
import { buildExamples } from './build-examples.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
for (const [name, log] of Object.entries(buildExamples())) {
  writeFileSync(join(dir, `${name}.jsonl`), log);
  const report = auditLines(name, log.split('\n'));
  const chain = await auditFileChain(join(dir, `${name}.jsonl`));
  writeFileSync(join(dir, `${name}.report.json`), `${JSON.stringify({ ...report, chain })}\n`);
  writeFileSync(join(dir, `${name}.report.txt`), formatAuditReport(report) + formatAuditChain(report, chain));
  console.log(`${name}: ${report.events} events, ${report.ok ? 'valid' : `invalid at seq ${report.errors[0]?.seq}`}`);
}
