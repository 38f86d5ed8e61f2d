import { isInvalidStoreSpecError } from '../store/open-store.js';
import { isStoreError } from '../../runtime/ports/store-errors.js';
import type { CliIo } from './io.js';

/**
 * Exit codes of every command: a failure to read is never reported as a verdict on the log.
 * - 0: done (the log is valid, the store checks clean)
 * - 1: the log is invalid, or the store is damaged (`store check`)
 * - 2: usage: bad arguments, an unknown store spec, no such session
 * - 3: the store or file could not be read: unreachable, permission denied, corrupt, missing (a StoreError, a
 *   {@link FileUnreadableError})
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, store: 3 } as const;

/** One exit code of {@link EXIT}. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The error of a failed command, as `--json` prints it: `{"ok":false,"error":{code,message}}`. */
export interface CliError {
  readonly code: string;
  readonly message: string;
}

/** The arguments cannot be run: an unknown option, a missing or extra argument, a value that does not parse. */
export class UsageError extends Error {
  readonly code = 'usage' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
/** Is this a {@link UsageError}? */
export const isUsageError = (e: unknown): e is UsageError => hasCode(e, 'usage');

/** The store holds no session by that id (a usage error: the store was read, the name is wrong). */
export class SessionNotFoundError extends Error {
  readonly code = 'session-not-found' as const;
  constructor(
    /** The session asked for. */
    readonly session: string,
    /** Where it was looked for, as given (a store spec or a file). */
    readonly where: string,
  ) {
    super(`no session ${session} in ${where}`);
    this.name = 'SessionNotFoundError';
  }
}
/** Is this a {@link SessionNotFoundError}? */
export const isSessionNotFoundError = (e: unknown): e is SessionNotFoundError => hasCode(e, 'session-not-found');

/** Why a file argument could not be read. */
export type FileUnreadableReason = 'missing' | 'not-a-file' | 'denied' | 'io' | 'read-failed';

/**
 * A file named on the command line could not be read: missing, a directory, permission denied, an I/O error, or a
 * read that failed part way (`read-failed`: the cause says where, e.g. a damaged zstd frame).
 */
export class FileUnreadableError extends Error {
  readonly code = 'file-unreadable' as const;
  constructor(
    /** The file as given. */
    readonly file: string,
    readonly reason: FileUnreadableReason,
    options?: { readonly cause?: unknown },
  ) {
    super(reason === 'read-failed' ? `cannot read ${file}` : `cannot read ${file}: ${REASONS[reason]}`, options);
    this.name = 'FileUnreadableError';
  }
}
/** Is this a {@link FileUnreadableError}? */
export const isFileUnreadableError = (e: unknown): e is FileUnreadableError => hasCode(e, 'file-unreadable');

const REASONS: Readonly<Record<FileUnreadableReason, string>> = {
  missing: 'no such file',
  'not-a-file': 'not a file (a directory?)',
  denied: 'permission denied',
  io: 'an I/O error',
  'read-failed': 'the read failed',
};

/** The reason of a failed `open`/`stat`/`read` of a file argument, from its errno code. */
export const fileUnreadable = (file: string, e: unknown): FileUnreadableError => {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  const reason: FileUnreadableReason = code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : code === 'EISDIR' ? 'not-a-file' : code === 'EACCES' || code === 'EPERM' ? 'denied' : 'io';
  return new FileUnreadableError(file, reason, { cause: e });
};

const hasCode = (e: unknown, code: string): boolean => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/** A command's failure as one line: each cause added only when its message is not already in the line. */
export const oneLine = (e: unknown): string => {
  let line = '';
  let cur: unknown = e;
  for (let i = 0; cur !== undefined && cur !== null && i < 8; i++) {
    const message = (cur instanceof Error ? cur.message : String(cur)).replace(/\s*\n\s*/g, ' ').trim();
    if (message !== '' && !line.includes(message)) line = line === '' ? message : `${line}: ${message}`;
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return line === '' ? 'unknown error' : line;
};

/**
 * The code and exit status of a failure — the one table every command's failure goes through: usage errors, unknown
 * store specs and unknown sessions exit 2; store errors, unreadable files and anything unexpected exit 3.
 */
export const classifyFailure = (e: unknown): { readonly error: CliError; readonly exit: ExitCode } => {
  if (isUsageError(e) || isInvalidStoreSpecError(e) || isSessionNotFoundError(e)) return { error: { code: e.code, message: oneLine(e) }, exit: EXIT.usage };
  if (isStoreError(e) || isFileUnreadableError(e)) return { error: { code: e.code, message: oneLine(e) }, exit: EXIT.store };
  const code = typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'internal';
  return { error: { code, message: oneLine(e) }, exit: EXIT.store };
};

/**
 * Prints a failure once — one line on stderr, or the one JSON object `{"ok":false,"error":{code,message}}` on stdout
 * with `--json` — and returns its exit code. A usage error's line points at `steerlog <command> --help`.
 */
export const reportFailure = (io: CliIo, command: string, e: unknown, json: boolean): ExitCode => {
  const { error, exit } = classifyFailure(e);
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
  else io.stderr.write(`steerlog ${command}: ${error.message}${isUsageError(e) ? ` (steerlog ${command} --help shows the usage)` : ''}\n`);
  return exit;
};

/**
 * A usage error, reported as every failure is ({@link reportFailure}); `problem` names it (else the usage's first
 * line does). `usage` starts `usage: steerlog <command>`, which names the command.
 */
export const reportUsage = (io: CliIo, usage: string, problem: string | undefined, json = false): ExitCode => {
  const command = /^usage: steerlog (\S+)/.exec(usage)?.[1] ?? 'steerlog';
  return reportFailure(io, command, new UsageError(problem || usage.split('\n')[0]!), json);
};

/** True when `--json` is among the options (before any `--`): a failure then prints its JSON object. */
export const wantsJson = (argv: readonly string[]): boolean => {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json') return true;
  }
  return false;
};
