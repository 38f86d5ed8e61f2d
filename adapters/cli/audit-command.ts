import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { createAuditor, type AuditReport } from '../../domain/audit.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { errorChain } from '../../runtime/errors.js';
import { openStore } from '../store/open-store.js';
import type { CliIo } from './io.js';
import { formatAuditReport } from './format-audit.js';
import { chainFails, formatAuditChain, formatOtherFates } from './audit-chain.js';
import { auditExtras, auditOutput, parseAuditLimit, pastLimit, type AuditExtras, type AuditLimit } from './audit-extras.js';
import { fileEnvelopes, storeEnvelopes } from './log-sources.js';
import { createProgress } from './progress.js';
import { parseArgs } from './parse-args.js';
import { readLineBatches } from './read-lines.js';

export const AUDIT_USAGE = `usage: steerlog audit <log.jsonl> [--at <seq|ISO time>] [--json]
       steerlog audit --store <spec> <session-id> [--at <seq|ISO time>] [--json]`;

/**
 * `steerlog audit`: validates and folds a session log — a JSONL file (one envelope per line) or a session stream in a
 * store — and prints the report. Exit 0 for a valid log, 1 for an invalid one, 2 for a usage error.
 */
export const auditCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseArgs(argv, { values: ['store', 'at'], flags: ['json'] });
  if (!args.ok || args.positional.length !== 1) {
    io.stderr.write(`${args.ok ? '' : `${args.error}\n`}${AUDIT_USAGE}\n`);
    return 2;
  }
  const limit = args.values.at === undefined ? undefined : parseAuditLimit(args.values.at);
  if (limit === null) {
    io.stderr.write(`--at takes a seq or an ISO 8601 time\n${AUDIT_USAGE}\n`);
    return 2;
  }
  const target = args.positional[0]!;
  let report: AuditReport;
  let extras: AuditExtras;
  const progress = createProgress(io, 'auditing', args.flags.json === true);
  if (args.values.store !== undefined) {
    let store: EventStore;
    try {
      store = await openStore(args.values.store);
    } catch (e) {
      io.stderr.write(`steerlog audit: ${errorChain(e)}\n${AUDIT_USAGE}\n`);
      return 2;
    }
    try {
      report = await auditStream(store, target, limit);
      extras = await auditExtras(target, storeEnvelopes(store, target), limit, progress.tick);
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
    report = await auditFile(target, limit);
    extras = await auditExtras(null, fileEnvelopes(target), limit, progress.tick);
  }
  progress.done();
  const out = auditOutput(report, extras, limit ?? null);
  io.stdout.write(args.flags.json ? `${JSON.stringify(out)}\n` : formatAuditReport(report) + formatOtherFates(out) + formatAuditChain(report, extras.chain));
  return report.ok && !chainFails(extras.chain) ? 0 : 1;
};

/** Streams a JSONL log through the auditor, line by line (memory flat in the log's length); stops past `limit`. */
export const auditFile = async (file: string, limit?: AuditLimit): Promise<AuditReport> => {
  const auditor = createAuditor(basename(file, extname(file)));
  outer: for await (const lines of readLineBatches(file)) {
    for (const line of lines) {
      if (limit && line.trim() !== '' && pastLimit(safeJson(line), limit)) break outer;
      auditor.push(line);
    }
  }
  return auditor.report();
};

/** Streams a session stream from a store through the auditor (each stored event as its envelope; seq = revision). */
export const auditStream = async (store: EventStore, stream: string, limit?: AuditLimit): Promise<AuditReport> => {
  const auditor = createAuditor(stream);
  for await (const e of store.read(stream)) {
    const envelope = envelopeOfRecorded(e);
    if (pastLimit(envelope, limit)) break;
    auditor.push(JSON.stringify(envelope));
  }
  return auditor.report();
};

const safeJson = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return null;
  }
};
