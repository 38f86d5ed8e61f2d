import type { TurnError } from '../domain/events.js';
import { errorChain, isMessageTooLargeError, isModelError } from './errors.js';

/** Longest error message a `turn/end` records (a longer one is cut, saying so), so the closing event always fits. */
const MAX_ERROR_MESSAGE = 4096;
const capMessage = (m: string): string => (m.length <= MAX_ERROR_MESSAGE ? m : `${m.slice(0, MAX_ERROR_MESSAGE)}… (${m.length} characters, cut)`);

/**
 * The facts a failed turn records in its `turn/end` and reports to the `error` hook: a model error's own message,
 * code and status; `MESSAGE_TOO_LARGE` for an event the store could not hold; otherwise the error chain, `UNKNOWN`.
 */
export const errorFacts = (e: unknown): TurnError => {
  if (isModelError(e)) return { message: capMessage(e.facts.message), code: e.facts.code, ...(e.facts.status !== undefined ? { status: e.facts.status } : {}) };
  if (isMessageTooLargeError(e)) return { message: e.message, code: 'MESSAGE_TOO_LARGE' };
  return { message: capMessage(errorChain(e)), code: 'UNKNOWN' };
};
