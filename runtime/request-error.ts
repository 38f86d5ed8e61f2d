import type { TurnError } from '../domain/events.js';
import { describeValue } from '../domain/json.js';
import { RuntimeError } from './errors.js';
import type { RequestErrorContext, RequestErrorListener, RetryDecision } from './hooks.js';

/**
 * The `agent/request-error` waterfall (docs/models.md): after a failed model request the listeners run in registration order,
 * each may call `next()`; the innermost stage is the retry policy's own answer. What comes out is the wait before
 * a new attempt of the same step, or null: the turn ends `error` with the failure.
 */

/** A listener's answer checked: `{kind:'retry', delayMs?}` or undefined; anything else fails the turn. */
const checkDecision = (d: unknown): RetryDecision | undefined => {
  if (d === undefined) return undefined;
  if (typeof d === 'object' && d !== null && (d as { kind?: unknown }).kind === 'retry') {
    const delayMs = (d as { delayMs?: unknown }).delayMs;
    if (delayMs === undefined) return { kind: 'retry' };
    if (typeof delayMs === 'number' && Number.isFinite(delayMs) && delayMs >= 0) return { kind: 'retry', delayMs };
  }
  throw new RuntimeError('invalid-request-error-decision', `a request-error listener returned ${describeValue(d)}; expected retry(delayMs?) or undefined`);
};

/** Runs the waterfall: the wait in ms before the next attempt, or null for no retry. A throwing listener throws. */
export const runRequestError = async <A>(listeners: readonly RequestErrorListener<A>[], ctx: RequestErrorContext<A>): Promise<number | null> => {
  const innermost = (): RetryDecision | undefined => {
    const delayMs = ctx.retryPolicy.decide(ctx.failure, { attempt: ctx.attempt, elapsedMs: ctx.elapsedMs });
    return delayMs === null ? undefined : { kind: 'retry', delayMs };
  };
  const run = async (i: number): Promise<RetryDecision | undefined> => {
    if (i === listeners.length) return innermost();
    return checkDecision(await listeners[i]!(ctx, () => run(i + 1)));
  };
  const decision = await run(0);
  if (decision === undefined) return null;
  return Math.round(decision.delayMs ?? ctx.retryPolicy.delayFor(ctx.attempt, ctx.failure as TurnError));
};
