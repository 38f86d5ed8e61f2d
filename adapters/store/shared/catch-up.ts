import type { EventStore, RecordedEvent, SubscriptionMessage } from '../../../runtime/ports/event-store.js';
import type { StreamPartitionFilter } from '../../../runtime/ports/stream-partition.js';
import type { ChangeNotifier } from './change-notifier.js';

export interface CatchUpSource {
  /** Reads every stored event after the cursor, in order. `cursor` is null before the first event. */
  readAfter(cursor: bigint | null): AsyncIterable<RecordedEvent>;
  /** The cursor value an event advances to (its revision, or its global position). */
  cursorOf(event: RecordedEvent): bigint;
}

/**
 * Catch-up then live, from any store that can read after a cursor and signal changes:
 * stored events, one `caught-up`, then each new event exactly once. The version is taken before every read,
 * so an append that lands between a read and the wait wakes the wait at once (no gap); the cursor skips
 * anything already delivered (no duplicate).
 */
export async function* catchUpThenLive(
  source: CatchUpSource,
  notifier: ChangeNotifier,
  start: bigint | null,
  signal?: AbortSignal,
): AsyncGenerator<SubscriptionMessage> {
  let cursor = start;
  let caughtUp = false;
  for (;;) {
    if (signal?.aborted || notifier.closed) return;
    const version = notifier.version;
    for await (const event of source.readAfter(cursor)) {
      if (signal?.aborted) return;
      cursor = source.cursorOf(event);
      yield { kind: 'event', event };
    }
    if (!caughtUp) {
      caughtUp = true;
      yield { kind: 'caught-up' };
    }
    if (!(await notifier.waitForChange(version, signal))) return;
  }
}

/** The catch-up source of one stream, from revision `from` (inclusive); its cursor is the revision. */
export const streamSource = (
  store: Pick<EventStore, 'read'>,
  stream: string,
  from: bigint = 0n,
): CatchUpSource => ({
  readAfter: (cursor) => store.read(stream, { from: cursor === null ? from : cursor + 1n }),
  cursorOf: (e) => e.revision,
});

/**
 * The catch-up source of the global order; its cursor is the global position (start with `after`, exclusive).
 * With `partition`, only the events of the streams in those partitions (see `ReadAllOptions.partition`).
 */
export const allSource = (store: Pick<EventStore, 'readAll'>, partition?: StreamPartitionFilter): CatchUpSource => ({
  readAfter: (cursor) => store.readAll({ ...(cursor === null ? {} : { after: cursor }), ...(partition !== undefined ? { partition } : {}) }),
  cursorOf: (e) => e.position,
});
