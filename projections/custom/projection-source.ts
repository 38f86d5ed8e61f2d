import type { RecordedEvent } from '../../runtime/ports/event-store.js';
import { readAllPages, subscribeAllPages, subscribeStreamPages, type PagedSubscriptionMessage } from '../../runtime/ports/paged-reads.js';
import { isSubscriptionDroppedError } from '../../runtime/ports/store-errors.js';
import type { RunProjectionOptions } from './projection-run.js';

/**
 * What a custom projection folds: one stream of the store (positions are its revisions) or, without `stream`, every
 * stream in the store's global order (positions are global positions).
 */
export type ProjectionSource = Pick<RunProjectionOptions, 'store' | 'stream'>;

/** Consecutive subscription drops without a folded event before the run gives up. */
const MAX_DROPS_WITHOUT_PROGRESS = 5;
/** Wait before resubscribing, times the number of consecutive drops. */
const RESUBSCRIBE_DELAY_MS = 50;

/**
 * Subscribes to the source after `position` (from its start when null): catch-up, then live. The stored events come a
 * page at a time from a store with `readPages` (one stream: `subscribeStreamPages`) or `readAllPages` (the global
 * order: `subscribeAllPages`).
 */
export const subscribeAfter = (
  { store, stream }: ProjectionSource,
  position: bigint | null,
  signal: AbortSignal,
): AsyncIterable<PagedSubscriptionMessage> =>
  stream !== undefined
    ? subscribeStreamPages(store, stream, { from: position === null ? 0n : position + 1n, signal })
    : subscribeAllPages(store, { ...(position === null ? {} : { after: position }), signal });

/** A recorded event's position in the source's coordinates: its revision in one stream, else its global position. */
export const positionIn = ({ stream }: ProjectionSource, recorded: RecordedEvent): bigint =>
  stream !== undefined ? recorded.revision : recorded.position;

/**
 * Head position − `committed` (null: nothing committed). One stream: O(1) via `revision`; all streams: reads the tail
 * after `committed`, O(lag).
 */
export const lagAfter = async ({ store, stream }: ProjectionSource, committed: bigint | null): Promise<bigint> => {
  const base = committed ?? -1n;
  if (stream !== undefined) {
    const head = await store.revision(stream);
    return head === 'no_stream' ? 0n : head > base ? head - base : 0n;
  }
  let head = base;
  for await (const page of readAllPages(store, committed === null ? {} : { after: committed })) head = page[page.length - 1]!.position;
  return head - base;
};

/**
 * Runs `consume` (one subscription, folded until it ends) and runs it again when the subscription is dropped (the
 * server's live buffer overflowed, the connection or the leader changed): `consume` resubscribes after the last folded
 * event, so nothing is skipped and nothing folded twice. It waits `RESUBSCRIBE_DELAY_MS` times the number of
 * consecutive drops first, and rethrows the store's error after `MAX_DROPS_WITHOUT_PROGRESS` consecutive drops without
 * progress (`progress()` unchanged across the attempt). Any other error is rethrown, and so is a drop once `stopped()`;
 * a stop during the wait returns without resubscribing.
 */
export const consumeResubscribing = async (
  consume: () => Promise<void>,
  progress: () => bigint | null,
  stopped: () => boolean,
): Promise<void> => {
  let drops = 0;
  for (;;) {
    const before = progress();
    try {
      await consume();
      return;
    } catch (e) {
      if (!isSubscriptionDroppedError(e) || stopped()) throw e;
      drops = progress() === before ? drops + 1 : 1;
      if (drops > MAX_DROPS_WITHOUT_PROGRESS) throw e;
      await new Promise((resolve) => setTimeout(resolve, RESUBSCRIBE_DELAY_MS * drops));
      if (stopped()) return;
    }
  }
};
