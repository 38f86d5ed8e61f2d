import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { createInterface } from 'node:readline';
import { createAuditor, type AuditReport } from '../../domain/audit.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { errorChain } from '../../runtime/errors.js';
import { openStore } from '../store/open-store.js';
import type { CliIo } from './io.js';
import { formatAuditReport } from './format-audit.js';
import { auditFileChain, auditStreamChain, chainFails, formatAuditChain, type AuditChain } from './audit-chain.js';
import { parseArgs } from './parse-args.js';

export const AUDIT_USAGE = `usage: steerlog audit <log.jsonl> [--json]
       steerlog audit --store <spec> <session-id> [--json]`;

/**
 * `steerlog audit`: validates and folds a session log — a JSONL file (one envelope per line) or a session stream in a
 * store — and prints the report. Exit 0 for a valid log, 1 for an invalid one, 2 for a usage error.
 */
export const auditCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseArgs(argv, { values: ['store'], flags: ['json'] });
  if (!args.ok || args.positional.length !== 1) {
    io.stderr.write(`${args.ok ? '' : `${args.error}\n`}${AUDIT_USAGE}\n`);
    return 2;
  }
  const target = args.positional[0]!;
  let report: AuditReport;
  let chain: AuditChain;
  if (args.values.store !== undefined) {
    let store: EventStore;
    try {
      store = await openStore(args.values.store);
    } catch (e) {
      io.stderr.write(`steerlog audit: ${errorChain(e)}\n${AUDIT_USAGE}\n`);
      return 2;
    }
    try {
      report = await auditStream(store, target);
      chain = await auditStreamChain(store, target);
    } finally {
      await store.close();
    }
    if (report.events === 0 && report.ok) {
      io.stderr.write(`steerlog audit: no session ${target} in ${args.values.store}\n`);
      return 2;
    }
  } else {
    try {
      if (!(await stat(target)).isFile()) throw new Error('not a file');
    } catch {
      io.stderr.write(`steerlog audit: cannot read ${target}\n${AUDIT_USAGE}\n`);
      return 2;
    }
    report = await auditFile(target);
    chain = await auditFileChain(target);
  }
  io.stdout.write(args.flags.json ? `${JSON.stringify({ ...report, chain })}\n` : formatAuditReport(report) + formatAuditChain(report, chain));
  return report.ok && !chainFails(chain) ? 0 : 1;
};

/** Streams a JSONL log through the auditor, line by line. */
export const auditFile = async (file: string): Promise<AuditReport> => {
  const auditor = createAuditor(basename(file, extname(file)));
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) auditor.push(line);
  return auditor.report();
};

/** Streams a session stream from a store through the auditor (each stored event as its envelope; seq = revision). */
export const auditStream = async (store: EventStore, stream: string): Promise<AuditReport> => {
  const auditor = createAuditor(stream);
  for await (const e of store.read(stream)) {
    auditor.push(JSON.stringify(envelopeOfRecorded(e)));
  }
  return auditor.report();
};
