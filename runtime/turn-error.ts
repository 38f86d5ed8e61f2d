import type { TurnError } from '../domain/events.js';
import { errorChain, isMessageTooLargeError, isModelError } from './errors.js';

/** Longest error message a `turn/end` records (a longer one is cut, saying so), so the closing event always fits. */
const MAX_ERROR_MESSAGE = 4096;
const capMessage = (m: string): string => (m.length <= MAX_ERROR_MESSAGE ? m : `${m.slice(0, MAX_ERROR_MESSAGE)}… (${m.length} characters, cut)`);

/** A model failure as a `turn/end` records it: message (capped), code, and the provider's status, retry-after and request id when known. */
export const modelFailureFacts = (f: TurnError): TurnError => ({
  message: capMessage(f.message),
  code: f.code,
  ...(f.status !== undefined ? { status: f.status } : {}),
  ...(f.providerRetryAfterMs !== undefined ? { providerRetryAfterMs: f.providerRetryAfterMs } : {}),
  ...(f.requestId !== undefined ? { requestId: f.requestId } : {}),
});

/**
 * The facts a failed turn records in its `turn/end` and reports to the `error` hook: a model error's own message,
 * code and status; `MESSAGE_TOO_LARGE` for an event the store could not hold; otherwise the error chain, `UNKNOWN`.
 */
export const errorFacts = (e: unknown): TurnError => {
  if (isModelError(e)) return modelFailureFacts(e.facts);
  if (isMessageTooLargeError(e)) return { message: e.message, code: 'MESSAGE_TOO_LARGE' };
  return { message: capMessage(errorChain(e)), code: 'UNKNOWN' };
};
