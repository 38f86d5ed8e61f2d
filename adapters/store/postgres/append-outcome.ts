/**
 * Which failures of a PostgreSQL append leave its outcome unknown. A statement (or COMMIT) the server received may
 * have committed when the connection breaks before its answer arrives; the answer is then lost, not negative.
 */

/** Errors raised before anything reached the server: connecting failed, so nothing can have been written. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * SQLSTATEs that report the connection or the backend going away rather than a refusal: class 08 (connection
 * exception), 57P01 admin shutdown (`pg_terminate_backend`), 57P02 crash shutdown.
 */
const isConnectionSqlState = (code: string): boolean => code.startsWith('08') || code === '57P01' || code === '57P02';

/**
 * Is `e`, raised by a query that was sent, a broken connection rather than an answer from the server?
 * An error with an ordinary SQLSTATE is the server's answer (the statement failed, nothing was written); a broken
 * socket, "Connection terminated unexpectedly", or a connection-class SQLSTATE is not.
 */
export const isLostConnection = (e: unknown): boolean => {
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return isConnectionSqlState(code);
  if (typeof code === 'string' && CONNECT_FAILURES.has(code)) return false;
  return e instanceof Error;
};
