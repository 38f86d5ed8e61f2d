/** Regenerates docs/examples/*.jsonl and their expected reports: `npx tsx docs/examples/write-examples.ts`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditLines } from '../../domain/audit.js';
import { formatAuditReport } from '../../adapters/cli/format-audit.js';
import { formatActions, formatAuditChain, formatOtherFates } from '../../adapters/cli/format-audit-extras.js';
import { auditExtras, auditOutput } from '../../audit/audit-extras.js';
import { fileEnvelopes } from '../../audit/log-sources.js';
import { buildExamples } from './build-examples.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
for (const [name, log] of Object.entries(buildExamples())) {
  writeFileSync(join(dir, `${name}.jsonl`), log);
  const report = auditLines(name, log.split('\n'));
  const out = auditOutput(report, await auditExtras(null, fileEnvelopes(join(dir, `${name}.jsonl`))), null);
  writeFileSync(join(dir, `${name}.report.json`), `${JSON.stringify(out)}\n`);
  writeFileSync(join(dir, `${name}.report.txt`), formatAuditReport(report) + formatOtherFates(out) + formatActions(out) + formatAuditChain(report, out.chain));
  console.log(`${name}: ${report.events} events, ${report.ok ? 'valid' : `invalid at seq ${report.errors[0]?.seq}`}`);
}
