import type { TurnError } from '../domain/events.js';
import { invalidArgument, optionalPositiveInteger, readOptions } from './arguments.js';

/**
 * The default answer to a failed model request (the `agent/request-error` waterfall's innermost stage): retry a
 * retryable failure — HTTP 408, 429 or 5xx, a connection failure, a stream cut — after an exponential backoff with
 * jitter, or after the provider's `providerRetryAfterMs` when it said one; never past `maxAttempts` attempts of one
 * step nor past `maxElapsedMs` since the step's first attempt. Everything that varies (randomness, waiting) is
 * injectable so a scenario replays exactly.
 */

/** The bounds and shape of the default retry policy. */
export interface RetryPolicyOptions {
  /** Attempts of one step at most, the first included (1 = never retry). @defaultValue 5 */
  readonly maxAttempts?: number;
  /** The backoff before the second attempt; it doubles for each later one. @defaultValue 500 */
  readonly baseDelayMs?: number;
  /** The longest backoff (a provider's retry-after above it is still honoured, within `maxElapsedMs`). @defaultValue 30000 */
  readonly maxDelayMs?: number;
  /** No retry would start later than this after the step's first attempt started. @defaultValue 120000 */
  readonly maxElapsedMs?: number;
  /** Uniform in [0, 1): the jitter. @defaultValue Math.random */
  readonly random?: () => number;
  /** Waits `ms` unless `signal` aborts first (then resolves at once). @defaultValue a timer */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** A retry policy with every option resolved, as the `request-error` hook sees it. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxElapsedMs: number;
  /** Whether the policy retries this failure at all (its status or code). */
  readonly isRetryable: (failure: TurnError) => boolean;
  /** The wait before attempt `attempt + 1` after `failure`: the provider's retry-after, else the jittered backoff. */
  readonly delayFor: (attempt: number, failure: TurnError) => number;
  /** The policy's own answer: the wait before the next attempt, or null (do not retry). */
  readonly decide: (failure: TurnError, at: { readonly attempt: number; readonly elapsedMs: number }) => number | null;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Failure codes the default policy retries whatever the status: the connection failed or the stream was cut
 * (`NETWORK`, `STREAM_CUT`, `ECONNRESET`, `ETIMEDOUT`, as steerlog's clients and Node name them), and the transient
 * codes of the protocol's reference taxonomy (`RATE_LIMIT`, `SERVER`, `TIMEOUT`, `TRANSPORT`, `EMPTY_RESPONSE`), so a
 * model port that reports those is retried as the reference retries it.
 */
export const RETRYABLE_CODES: readonly string[] = ['NETWORK', 'STREAM_CUT', 'ECONNRESET', 'ETIMEDOUT', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'EMPTY_RESPONSE'];

/** Retryable by default: HTTP 408, 429 or 5xx, or a code of {@link RETRYABLE_CODES}. */
export const isRetryableFailure = (failure: TurnError): boolean =>
  (failure.status !== undefined && (failure.status === 408 || failure.status === 429 || (failure.status >= 500 && failure.status <= 599))) ||
  RETRYABLE_CODES.includes(failure.code);

/** A timer that resolves after `ms`, or at once when `signal` aborts (and then clears itself). */
export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** The policy `options` describe (every option defaulted). */
export const retryPolicy = (options: RetryPolicyOptions = {}): RetryPolicy => {
  const maxAttempts = options.maxAttempts ?? 5;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const maxElapsedMs = options.maxElapsedMs ?? 120_000;
  const random = options.random ?? Math.random;
  const delayFor = (attempt: number, failure: TurnError): number => {
    if (failure.providerRetryAfterMs !== undefined) return failure.providerRetryAfterMs;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempt - 1));
    // equal jitter: at least half the backoff, so a storm of clients spreads out without retrying at once
    return Math.round(ceiling / 2 + (random() * ceiling) / 2);
  };
  return {
    maxAttempts,
    baseDelayMs,
    maxDelayMs,
    maxElapsedMs,
    isRetryable: isRetryableFailure,
    delayFor,
    decide: (failure, { attempt, elapsedMs }) => {
      if (!isRetryableFailure(failure) || attempt >= maxAttempts) return null;
      const delay = delayFor(attempt, failure);
      return elapsedMs + delay > maxElapsedMs ? null : delay;
    },
    sleep: options.sleep ?? abortableSleep,
  };
};

/** A policy that never retries (`retry: false`); a `request-error` listener may still answer retry. */
export const noRetryPolicy = (): RetryPolicy => retryPolicy({ maxAttempts: 1 });

/** Checks `createRuntime({retry})`: positive integer attempts, non-negative finite delays, functions (`invalid-argument` naming the option). */
export const checkRetryOptions = (value: unknown, where: string): void => {
  const o = readOptions(value, where, ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'maxElapsedMs', 'random', 'sleep']);
  optionalPositiveInteger(o.maxAttempts, `${where}.maxAttempts`);
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxElapsedMs'] as const) {
    const v = o[key];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) throw invalidArgument(`${where}.${key}`, 'expected a number of milliseconds >= 0');
  }
  for (const key of ['random', 'sleep'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'function') throw invalidArgument(`${where}.${key}`, 'expected a function');
  }
};
