import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { createInterface } from 'node:readline';
import { createAuditor, type AuditReport } from '../../domain/audit.js';
import type { CliIo } from './io.js';
import { formatAuditReport } from './format-audit.js';

export const AUDIT_USAGE = 'usage: steerlog audit <log.jsonl> [--json]';

/** `steerlog audit <log.jsonl> [--json]`: exit 0 for a valid log, 1 for an invalid one, 2 for a usage error. */
export const auditCommand = async (args: readonly string[], io: CliIo): Promise<number> => {
  const json = args.includes('--json');
  const rest = args.filter((a) => a !== '--json');
  const unknown = rest.filter((a) => a.startsWith('-'));
  if (rest.length !== 1 || unknown.length > 0) {
    io.stderr.write(`${unknown.length ? `unknown option ${unknown[0]}\n` : ''}${AUDIT_USAGE}\n`);
    return 2;
  }
  const file = rest[0]!;
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a file');
  } catch {
    io.stderr.write(`steerlog audit: cannot read ${file}\n${AUDIT_USAGE}\n`);
    return 2;
  }
  const report = await auditFile(file);
  io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatAuditReport(report));
  return report.ok ? 0 : 1;
};

/** Streams a JSONL log through the auditor, line by line. */
export const auditFile = async (file: string): Promise<AuditReport> => {
  const auditor = createAuditor(basename(file, extname(file)));
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) auditor.push(line);
  return auditor.report();
};
