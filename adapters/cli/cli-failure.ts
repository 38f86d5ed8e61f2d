import { isInvalidStoreSpecError } from '../store/open-store.js';
import { isStoreError } from '../../runtime/ports/store-errors.js';
import type { CliIo } from './io.js';

/**
 * Exit codes of every command: a failure to read is never reported as a verdict on the log.
 * - 0: done (the log is valid, the store checks clean)
 * - 1: the log is invalid, or the store is damaged (`store check`)
 * - 2: usage: bad arguments, an unknown store spec, no such session
 * - 3: the store could not be read: unreachable, permission denied, corrupt, missing (a StoreError)
 */
export const EXIT = { ok: 0, invalid: 1, usage: 2, store: 3 } as const;

/** One exit code of {@link EXIT}. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The error of a failed command, as `--json` prints it: `{"ok":false,"error":{code,message}}`. */
export interface CliError {
  readonly code: string;
  readonly message: string;
}

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

/** The code and exit status of a failure: store errors exit 3, bad specs 2, anything unexpected 3. */
export const classifyFailure = (e: unknown): { readonly error: CliError; readonly exit: ExitCode } => {
  if (isInvalidStoreSpecError(e)) return { error: { code: e.code, message: oneLine(e) }, exit: EXIT.usage };
  if (isStoreError(e)) return { error: { code: e.code, message: oneLine(e) }, exit: EXIT.store };
  const code = typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string' ? (e as { code: string }).code : 'internal';
  return { error: { code, message: oneLine(e) }, exit: EXIT.store };
};

/** Prints a failure once — one line on stderr, or the one JSON object on stdout with `--json` — and returns its exit code. */
export const reportFailure = (io: CliIo, command: string, e: unknown, json: boolean): ExitCode => {
  const { error, exit } = classifyFailure(e);
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
  else io.stderr.write(`steerlog ${command}: ${error.message}\n`);
  return exit;
};

/** A usage error: one line naming the problem, then the command's usage (or one JSON object with `--json`). */
export const reportUsage = (io: CliIo, usage: string, problem: string | undefined, json = false): ExitCode => {
  if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'usage', message: problem ?? usage.split('\n')[0] } })}\n`);
  else io.stderr.write(`${problem ? `${problem}\n` : ''}${usage}\n`);
  return EXIT.usage;
};
