import type { AuditReport } from '../domain/audit.js';
import type { Keyring } from '../runtime/content-opener.js';
import type { AuditChain, AuditExtras } from './audit-extras.js';
import type { AuditLimit } from './audit-limit.js';
import { auditFileOnePass, auditStreamOnePass, type AuditStreams } from './audit-pass.js';
import { auditStreamFileLines, type StreamFileReader } from './audit-fold.js';
import { auditDshFile } from './dsh-audit.js';
import { resolveFileFormat } from './log-format.js';
import type { LogSource } from './log-source.js';

/** Options of {@link auditLog}. */
export interface AuditLogOptions {
  /** Fold up to this seq or time (`--at`). @defaultValue the whole log */
  readonly at?: AuditLimit;
  /** The keys sealed content is opened with. @defaultValue null (sealed content reads `[encrypted]` or `[erased]`) */
  readonly keyring?: Keyring | null;
  /** Told once per event read (a progress display). @defaultValue none */
  readonly onEvent?: () => void;
  /**
   * Called once, when the audit starts a pass that reports turns, messages and actions as it decides them (never for
   * a store's raw stream file, whose report is whole): the callbacks that take them (a streaming writer).
   * @defaultValue none: they stay in the report and the extras
   */
  readonly streamTurns?: () => AuditStreams;
  /** How a JSONL store's raw stream file is read. @defaultValue none: every steerlog file is an envelope log */
  readonly streamFiles?: StreamFileReader;
}

/**
 * What `audit` finds in a log: the fold's report and the extras (the hash chain, each input's fate, the times, the
 * sealed content, the actions, where a harness log came from); `extras` is null for a store's raw stream file,
 * whose report is the fold's alone.
 */
export interface AuditLogResult {
  readonly report: AuditReport;
  readonly extras: AuditExtras | null;
}

/**
 * The audit use case: validates and folds one session's log from its source — an envelope log file, a JSONL
 * store's stream file, a harness log, or a session of an opened store — in one streaming pass (the chain check on
 * a second core for a large file). Undefined when the store has no such session.
 */
export const auditLog = async (source: LogSource, options: AuditLogOptions = {}): Promise<AuditLogResult | undefined> => {
  const fold = (): AuditStreams => options.streamTurns?.() ?? {};
  const keyring = options.keyring ?? null;
  if (source.kind === 'store') return auditStreamOnePass(source.store, source.session, options.at, fold(), options.onEvent, keyring);
  const file = source.path;
  if ((await resolveFileFormat(file, source.format ?? 'auto')) === 'dsh') return auditDshFile(file, options.at, fold(), options.onEvent);
  if (options.streamFiles !== undefined && (await options.streamFiles.isStreamFile(file))) {
    return { report: await auditStreamFileLines(await options.streamFiles.read(file)), extras: null };
  }
  return auditFileOnePass(file, options.at, fold(), options.onEvent, keyring);
};

/** The state of a session at one seq or time: the audit use case folded up to `at` (`audit --at`). */
export const sessionAt = (source: LogSource, at: AuditLimit, options: Omit<AuditLogOptions, 'at'> = {}): Promise<AuditLogResult | undefined> =>
  auditLog(source, { ...options, at });

/** Does the chain make the audit fail? A broken or unreadable chain does; an unchained (older) log does not. */
export const chainFails = (chain: AuditChain): boolean => chain.status === 'broken' || chain.status === 'unreadable';

/**
 * The audit's verdict: the log is valid, its chain (when it has one) intact, and a harness log was read to its end.
 * A front door maps it to its own answer (`audit`'s exit 0 or 1).
 */
export const auditPasses = (result: AuditLogResult): boolean =>
  result.extras === null ? result.report.ok : result.report.ok && !chainFails(result.extras.chain) && !result.extras.source?.error;
