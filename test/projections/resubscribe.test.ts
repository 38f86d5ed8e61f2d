/**
 * runProjection's resubscribe policy (projections/custom/projection-source.ts): a dropped subscription is consumed
 * again; five consecutive drops without progress end it with the store's error; progress resets the count; any other
 * error, or a drop once stopped, is rethrown at once.
 */
import { describe, expect, it } from 'vitest';
import { consumeResubscribing } from '../../projections/custom/projection-source.js';
import { SubscriptionDroppedError } from '../../runtime/ports/store-errors.js';

const dropped = (n: number): SubscriptionDroppedError => new SubscriptionDroppedError('test', `drop ${n}`);

describe('consumeResubscribing', () => {
  it('gives up after five consecutive drops without progress, with the last drop', async () => {
    let attempts = 0;
    const failure = await consumeResubscribing(
      () => Promise.reject(dropped(++attempts)),
      () => null,
      () => false,
    ).catch((e: unknown) => e);
    expect(attempts).toBe(6);
    expect(failure).toBeInstanceOf(SubscriptionDroppedError);
    expect((failure as SubscriptionDroppedError).code).toBe('subscription-dropped');
    expect((failure as Error).message).toContain('drop 6');
  });

  it('counts only drops without progress: a folded event in between starts the count again', async () => {
    let attempts = 0;
    let position = 0n;
    await consumeResubscribing(
      async () => {
        attempts += 1;
        if (attempts === 9) return; // the subscription ends (a stop)
        if (attempts % 4 === 0) position += 1n; // every fourth attempt folds an event before it is dropped
        throw dropped(attempts);
      },
      () => position,
      () => false,
    );
    expect(attempts).toBe(9);
  });

  it('rethrows any other error at once', async () => {
    let attempts = 0;
    const boom = new Error('boom');
    await expect(
      consumeResubscribing(
        () => {
          attempts += 1;
          return Promise.reject(boom);
        },
        () => null,
        () => false,
      ),
    ).rejects.toBe(boom);
    expect(attempts).toBe(1);
  });

  it('rethrows a drop once stopped, and returns without resubscribing when stopped during the wait', async () => {
    await expect(consumeResubscribing(() => Promise.reject(dropped(1)), () => null, () => true)).rejects.toBeInstanceOf(
      SubscriptionDroppedError,
    );
    let attempts = 0;
    let checks = 0;
    await consumeResubscribing(
      () => Promise.reject(dropped(++attempts)),
      () => null,
      () => ++checks > 1, // running when the drop is taken, stopped after the wait
    );
    expect(attempts).toBe(1);
  });
});
