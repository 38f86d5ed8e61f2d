import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { createAuditor, type AuditorOptions, type AuditReport } from '../../domain/audit.js';
import { openAuditSpool, type AuditSpool } from './audit-json-writer.js';
import type { EventStore, RecordedEvent } from '../../runtime/ports/event-store.js';
import { StoreCorruptError } from '../../runtime/ports/store-errors.js';
import { decodeLine } from '../store/jsonl/line-codec.js';
import { assertReadableFile, openStoreToRead, unreadNotes, unreadOf } from './reading-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage, SessionNotFoundError } from './cli-failure.js';
import { formatAuditReport } from './format-audit.js';
import type { CliIo } from './io.js';
import { readLineBatches } from '../../audit/read-lines.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { chainFails, formatActions, formatAuditChain, formatOtherFates } from './audit-chain.js';
import { auditOutput, type AuditExtras } from '../../audit/audit-extras.js';
import { parseAuditLimit, pastLimit, type AuditLimit } from '../../audit/audit-limit.js';
import { auditFileOnePass, auditStreamOnePass } from '../../audit/audit-pass.js';
import { createProgress } from './progress.js';
import { auditDshFile, formatAuditSource, withSourceError } from '../../audit/dsh-audit.js';
import { type AuditSource } from '../../audit/audit-source.js';
import { parseFormatOption, resolveFileFormat } from '../../audit/log-format.js';

import { formatAuditContent } from '../../audit/audit-content.js';
import { openReaderKeys } from './reader-keys.js';

export const AUDIT_USAGE = `usage: steerlog audit <log.jsonl> [--format auto|steerlog|dsh] [--at <seq|ISO time>] [--keys <spec>] [--json]
       steerlog audit --store <spec> <session-id> [--at <seq|ISO time>] [--keys <spec>] [--json]
  --at <seq|time>   the state as of that seq, or of the last event at or before that ISO 8601 time (time travel)
  <log.jsonl>       a session log, one envelope per line (what steerlog export writes), or a JSONL store's
                    stream file (.steerlog/streams/<file>.jsonl: its header line says so)
  --format <f>      how to read the file: steerlog, dsh (the harness's session log, .jsonl or .jsonl.zst), or
                    auto (the default: recognised by its first bytes)
  --store <spec>    read the session from a store, read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… |
                    archive:<file>
  --keys <spec>     the data keys of encrypted content, read-only: file:<path> | postgres://… (default with --store:
                    file:<dir>/keys.json for jsonl:<dir>, the same database for postgres://…); says what is
                    readable, [erased] or [encrypted]
  --json            print the report (or the error) as one JSON object
exit: 0 valid, 1 invalid, 2 usage or no such session, 3 the store or file could not be read`;

/**
 * `steerlog audit`: validates and folds a session log — an envelope log file, a JSONL store's stream file, or a
 * session stream in a store opened read-only — and prints the report. Exit codes: see AUDIT_USAGE.
 */
export const auditCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'at', 'format', 'keys'], flags: ['json'] });
  if (!args.ok) return reportUsage(io, AUDIT_USAGE, args.error, argv.includes('--json'));
  const json = args.flags.json === true;
  if (args.positionals.length !== 1) return reportUsage(io, AUDIT_USAGE, args.positionals.length === 0 ? 'which log?' : 'one log at a time', json);
  const target = args.positionals[0]!;
  const spec = args.strings.store;
  const limit = args.strings.at === undefined ? undefined : parseAuditLimit(args.strings.at);
  if (limit === null) return reportUsage(io, AUDIT_USAGE, '--at takes a seq or an ISO 8601 time', json);
  const formatOption = parseFormatOption(args.strings.format);
  if (formatOption === null) return reportUsage(io, AUDIT_USAGE, '--format takes auto, steerlog or dsh', json);
  if (spec !== undefined && formatOption === 'dsh') return reportUsage(io, AUDIT_USAGE, '--format dsh reads a file, not a store', json);
  const progress = createProgress(io, 'auditing', json);
  let report: AuditReport;
  // the chain, the fates and the times (from the same streaming pass); not for a store's raw stream file
  let extras: AuditExtras | null = null;
  // --json over a log with extras: turns and messages go to a temporary spool as decided, not held until printed
  let spool: AuditSpool | null = null;
  const keys = await openReaderKeys(spec, args.strings.keys).catch((e: unknown) => e as Error);
  if (keys instanceof Error) return reportFailure(io, 'audit', keys, json);
  try {
    if (spec !== undefined) {
      const store = await openStoreToRead(spec);
      try {
        spool = json ? openAuditSpool() : null;
        const audited = await auditStreamOnePass(store, target, limit, spoolOptions(spool), progress.tick, keys.keyring);
        if (audited === undefined) {
          spool?.close();
          return reportFailure(io, 'audit', new SessionNotFoundError(target, spec), json);
        }
        const storeNotes: string[] = [];
        for (const line of unreadOf(store)) unreadNotes(io, 'audit', json ? storeNotes : undefined)(line);
        ({ report, extras } = audited);
        if (json) extras = { ...audited.extras, storeNotes };
      } finally {
        await store.close();
      }
    } else {
      await assertReadableFile(target);
      if ((await resolveFileFormat(target, formatOption)) === 'dsh') {
        spool = json ? openAuditSpool() : null;
        ({ report, extras } = await auditDshFile(target, limit, spoolOptions(spool), progress.tick));
      } else if (await isStreamFile(target)) report = await auditStreamFile(target);
      else {
        spool = json ? openAuditSpool() : null;
        ({ report, extras } = await auditFileOnePass(target, limit, spoolOptions(spool), progress.tick, keys.keyring));
      }
    }
  } catch (e) {
    spool?.close();
    return reportFailure(io, 'audit', e, json);
  } finally {
    progress.done();
    await keys.close();
  }
  if (extras === null) {
    spool?.close();
    io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatAuditReport(report));
    return report.ok ? EXIT.ok : EXIT.invalid;
  }
  if (spool !== null) {
    try {
      await spool.write(io, report, extras, limit ?? null);
    } finally {
      spool.close();
    }
  } else {
    const out = auditOutput(report, extras, limit ?? null);
    io.stdout.write(json ? `${JSON.stringify(out)}\n` : humanAudit(report, out, extras));
  }
  return report.ok && !chainFails(extras.chain) && !extras.source?.error ? EXIT.ok : EXIT.invalid;
};

const humanAudit = (report: AuditReport, out: ReturnType<typeof auditOutput>, extras: AuditExtras): string => {
  const source: AuditSource | undefined = extras.source;
  if (!source) return formatAuditReport(report) + formatOtherFates(out) + formatActions(out) + formatAuditChain(report, extras.chain) + formatAuditContent(out.content);
  return formatAuditReport(withSourceError(report, source)) + formatOtherFates(out) + formatActions(out) + formatAuditSource(source) + formatAuditContent(out.content);
};

const spoolOptions = (spool: AuditSpool | null): AuditorOptions => (spool ? { onTurn: spool.turn, onMessage: spool.message } : {});

/**
 * Streams an envelope log (one JSON envelope per line) through the auditor, memory flat in the log's length. (The
 * fold alone; `audit` itself runs `auditFileOnePass`, which also gives the extras.)
 */
export const auditFile = async (file: string, limit?: AuditLimit, options?: AuditorOptions): Promise<AuditReport> => {
  const auditor = createAuditor(basename(file, extname(file)), options);
  outer: for await (const lines of readLineBatches(file)) {
    for (const line of lines) {
      if (limit && line.trim() !== '' && pastLimit(safeJson(line), limit)) break outer;
      auditor.push(line);
    }
  }
  return auditor.report();
};

/** A stored event as the envelope line of the exchange format (`seq` = stream revision). */
export const envelopeLine = (e: RecordedEvent): string => JSON.stringify(envelopeOfRecorded(e));

/** Streams a session from a store through the auditor; undefined when the store has no such session. */
export const auditStream = async (store: EventStore, stream: string, limit?: AuditLimit, options?: AuditorOptions): Promise<AuditReport | undefined> => {
  const auditor = createAuditor(stream, options);
  let any = false;
  for await (const e of store.read(stream)) {
    any = true;
    const envelope = envelopeOfRecorded(e);
    if (pastLimit(envelope, limit)) break;
    auditor.push(JSON.stringify(envelope));
  }
  return any ? auditor.report() : undefined;
};

/** Whether the file starts with a JSONL store stream header line. */
export const isStreamFile = async (file: string): Promise<boolean> => {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const nl = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (nl < 0) return false;
    const decoded = decodeLine(buffer.subarray(0, nl));
    return typeof decoded !== 'string' && decoded.kind === 'header';
  } finally {
    await handle.close();
  }
};

/**
 * Audits a JSONL store's stream file. Inside a store directory (`<dir>/streams/<file>`) the store is opened
 * read-only and the session read through it, so only committed events count and damage is refused; a copy
 * outside any store is read line by line (every checksum verified; it has no index to say what was committed).
 */
export const auditStreamFile = async (file: string): Promise<AuditReport> => {
  const storeDir = dirname(dirname(file));
  if (basename(dirname(file)) === 'streams' && (await stat(join(storeDir, 'global.idx')).catch(() => undefined))) {
    const store = await openStoreToRead(`jsonl:${storeDir}`);
    try {
      const header = await headerStream(file);
      return (await auditStream(store, header)) ?? createAuditor(header).report();
    } finally {
      await store.close();
    }
  }
  const lines = createInterface({ input: createReadStream(file, { encoding: 'latin1' }), crlfDelay: Infinity });
  let auditor: ReturnType<typeof createAuditor> | undefined;
  let n = 0;
  let offset = 0;
  for await (const text of lines) {
    n++;
    const bytes = Buffer.from(text, 'latin1');
    const decoded = decodeLine(bytes);
    if (typeof decoded === 'string') throw new StoreCorruptError(file, offset, decoded, n);
    if (decoded.kind === 'header') {
      if (auditor) throw new StoreCorruptError(file, offset, 'a header line in the middle of the file', n);
      auditor = createAuditor(decoded.stream);
    } else {
      const e = decoded.event;
      auditor!.push(
        JSON.stringify({
          seq: e.rev,
          id: e.id,
          time: e.time,
          type: e.type,
          data: e.data,
          ...(e.ignorable ? { ignorable: true } : {}),
          ...(e.metadata !== undefined ? { metadata: e.metadata } : {}),
          ...(e.hash !== undefined ? { hash: e.hash } : {}),
        }),
      );
    }
    offset += bytes.length + 1;
  }
  return auditor!.report();
};

const headerStream = async (file: string): Promise<string> => {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const decoded = decodeLine(buffer.subarray(0, buffer.subarray(0, bytesRead).indexOf(0x0a)));
    if (typeof decoded === 'string' || decoded.kind !== 'header') throw new StoreCorruptError(file, 0, 'no header line', 1);
    return decoded.stream;
  } finally {
    await handle.close();
  }
};

const safeJson = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return null;
  }
};
