import type { ModelFailure } from '../../../runtime/ports/model.js';

/**
 * An OpenAI-compatible server's refusal as the model port reports it: the HTTP status, the provider's error code and
 * message when its body says them (`{error: {code, type, message}}`), else `HTTP_<status>`; the request id
 * (`x-request-id`) and how long the server asked to wait (`retry-after-ms`, else `Retry-After` in seconds or as an
 * HTTP date), which the retry policy honours.
 */

/** The server's requested wait in ms, or undefined: `retry-after-ms`, else `Retry-After` (delay-seconds or HTTP-date, RFC 9110 §10.2.3). */
export const retryAfterMs = (headers: Headers, now: number): number | undefined => {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms.trim()));
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
};

/** The request id the server gave (`x-request-id`, as OpenAI and most compatible servers name it). */
export const requestIdOf = (headers: Headers): string | undefined => headers.get('x-request-id') ?? headers.get('request-id') ?? undefined;

/** The failure of a non-2xx answer, from its status, headers and body text. */
export const httpFailure = (status: number, headers: Headers, body: string, now: number): ModelFailure => {
  let code = `HTTP_${status}`;
  let message = `the model answered HTTP ${status}`;
  try {
    const err = (JSON.parse(body) as { error?: { code?: unknown; type?: unknown; message?: unknown } }).error;
    if (typeof err?.code === 'string' && err.code) code = err.code;
    else if (typeof err?.type === 'string' && err.type) code = err.type;
    if (typeof err?.message === 'string' && err.message) message = err.message;
  } catch {
    // not JSON: keep the status
  }
  const wait = retryAfterMs(headers, now);
  const requestId = requestIdOf(headers);
  return { message, code, status, ...(wait !== undefined ? { providerRetryAfterMs: wait } : {}), ...(requestId !== undefined ? { requestId } : {}) };
};
