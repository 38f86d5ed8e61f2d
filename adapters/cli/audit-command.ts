import type { AuditReport } from '../../domain/audit.js';
import { openAuditSpool, type AuditSpool } from './audit-json-writer.js';
import { openAuditTextSpool } from './audit-text-writer.js';
import { assertReadableFile, openStoreToRead, unreadNotes, unreadOf } from './reading-store.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, reportFailure, reportUsage, SessionNotFoundError } from './cli-failure.js';
import { formatAuditReport } from './format-audit.js';
import type { CliIo } from './io.js';
import { formatActions, formatAuditChain, formatOtherFates } from './format-audit-extras.js';
import { auditOutput, type AuditExtras } from '../../audit/audit-extras.js';
import { parseAuditLimit } from '../../audit/audit-limit.js';
import { auditLog, auditPasses, type AuditLogOptions, type AuditLogResult } from '../../audit/audit-log.js';
import { fileSource, storeSource } from '../../audit/log-source.js';
import { createProgress } from './progress.js';
import { formatAuditSource, withSourceError } from '../../audit/dsh-audit.js';
import { parseFormatOption } from '../../audit/log-format.js';
import { formatAuditContent } from '../../audit/audit-content.js';
import { jsonlStreamFiles } from '../store/jsonl/stream-file-log.js';
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
 * `steerlog audit`: parses its arguments, opens what it reads (the store read-only, the key store), asks the audit
 * use case (`auditLog`, audit/audit-log.ts) and prints its answer. Exit codes: see AUDIT_USAGE.
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
  // a log with extras: turns, messages and actions go to a temporary spool as decided, not held until printed (the
  // JSON output's, or the human report's lines)
  let spool = null as AuditSpool | null;
  const keys = await openReaderKeys(spec, args.strings.keys).catch((e: unknown) => e as Error);
  if (keys instanceof Error) return reportFailure(io, 'audit', keys, json);
  const options: AuditLogOptions = {
    ...(limit !== undefined ? { at: limit } : {}),
    keyring: keys.keyring,
    onEvent: progress.tick,
    streamFiles: jsonlStreamFiles,
    streamTurns: () => (spool = json ? openAuditSpool() : openAuditTextSpool()).streams,
  };
  let result: AuditLogResult;
  try {
    if (spec !== undefined) {
      const store = await openStoreToRead(spec);
      try {
        const audited = await auditLog(storeSource(store, target), options);
        if (audited === undefined) {
          spool?.close();
          return reportFailure(io, 'audit', new SessionNotFoundError(target, spec), json);
        }
        const storeNotes: string[] = [];
        for (const line of unreadOf(store)) unreadNotes(io, 'audit', json ? storeNotes : undefined)(line);
        result = json && audited.extras !== null ? { ...audited, extras: { ...audited.extras, storeNotes } } : audited;
      } finally {
        await store.close();
      }
    } else {
      await assertReadableFile(target);
      result = (await auditLog(fileSource(target, formatOption), options))!;
    }
  } catch (e) {
    spool?.close();
    return reportFailure(io, 'audit', e, json);
  } finally {
    progress.done();
    await keys.close();
  }
  const { report, extras } = result;
  const exit = auditPasses(result) ? EXIT.ok : EXIT.invalid;
  if (extras === null) {
    spool?.close();
    io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatAuditReport(report));
    return exit;
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
  return exit;
};

const humanAudit = (report: AuditReport, out: ReturnType<typeof auditOutput>, extras: AuditExtras): string => {
  const source = extras.source;
  if (!source) return formatAuditReport(report) + formatOtherFates(out) + formatActions(out) + formatAuditChain(report, extras.chain) + formatAuditContent(out.content);
  return formatAuditReport(withSourceError(report, source)) + formatOtherFates(out) + formatActions(out) + formatAuditSource(source) + formatAuditContent(out.content);
};
