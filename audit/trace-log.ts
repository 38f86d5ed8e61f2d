import { isDshLogError } from '../formats/dsh/dsh-errors.js';
import { openDshLog } from '../formats/dsh/dsh-source.js';
import { resolveFileFormat } from './log-format.js';
import { fileEnvelopes, storeEnvelopes } from './log-sources.js';
import type { LogSource } from './log-source.js';
import { isTraceLogInvalidError, traceSession, type TraceSessionOptions, type TraceSessionResult } from './trace-session.js';

/**
 * The trace use case's answer: the session's trace; or the log is invalid (a verdict, not a failure to read: the
 * fold's refusal or the harness reader's); or the store has no such session.
 */
export type TraceLogAnswer =
  | { readonly kind: 'trace'; readonly trace: TraceSessionResult }
  | { readonly kind: 'invalid'; readonly code: string; readonly message: string }
  | { readonly kind: 'no-such-session' };

/**
 * The trace use case: derives a session's OpenTelemetry trace from its log — an envelope log, a JSONL store's
 * stream file or a harness log (by its format), or a session of an opened store (`traceSession` over its envelopes).
 */
export function traceLog(source: LogSource & { readonly kind: 'file' }, options?: TraceSessionOptions): Promise<Exclude<TraceLogAnswer, { readonly kind: 'no-such-session' }>>;
export function traceLog(source: LogSource, options?: TraceSessionOptions): Promise<TraceLogAnswer>;
export async function traceLog(source: LogSource, options: TraceSessionOptions = {}): Promise<TraceLogAnswer> {
  // an invalid log is a verdict, caught where it is thrown (before a front door's reader wraps it as a read failure)
  const verdict = async (trace: () => Promise<TraceSessionResult>): Promise<Exclude<TraceLogAnswer, { readonly kind: 'no-such-session' }>> => {
    try {
      return { kind: 'trace', trace: await trace() };
    } catch (e) {
      if (isTraceLogInvalidError(e) || isDshLogError(e)) return { kind: 'invalid', code: e.code, message: e.message };
      throw e;
    }
  };
  if (source.kind === 'store') {
    const traced = await verdict(() => traceSession(storeEnvelopes(source.store, source.session), options));
    return traced.kind === 'trace' && traced.trace.sessionId === null && traced.trace.spans.length === 0 ? { kind: 'no-such-session' } : traced;
  }
  const format = await resolveFileFormat(source.path, source.format ?? 'auto');
  return verdict(() => traceSession(format === 'dsh' ? openDshLog(source.path).envelopes : fileEnvelopes(source.path), options));
}
