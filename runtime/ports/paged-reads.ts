import type { StreamPartitionFilter } from './stream-partition.js';
import type { EventStore, ReadAllPagesOptions, ReadPagesOptions, RecordedEvent, SubscriptionMessage } from './event-store.js';

/**
 * Paged reads over any store: `readStreamPages` (`readAllPages`) uses a store's own `readPages` (`readAllPages`) and
 * batches `read` (`readAll`) for the others; `subscribeStreamPages` (`subscribeAllPages`) is a catch-up-then-live
 * subscription whose catch-up goes a page at a time.
 */

/** The page size of a store that does not say otherwise. */
export const DEFAULT_READ_PAGE_SIZE = 512;

/** The page size `options` asks for — rounded down, at least 1 — or `fallback` when it asks for none (or for `Infinity`). */
export const pageSizeOf = (options: { readonly pageSize?: number }, fallback: number): number => {
  if (options.pageSize === undefined || options.pageSize === Number.POSITIVE_INFINITY) return fallback;
  const n = Math.floor(options.pageSize);
  return n >= 1 ? n : 1;
};

/**
 * Groups `items` into arrays of `pageSize` (the last one shorter, none empty). When `items` fails, the page of the
 * items before the failure is handed out first, then the error: the pages hold what `items` yielded before it.
 */
export async function* pagesOf<T>(items: AsyncIterable<T>, pageSize: number): AsyncGenerator<readonly T[]> {
  let page: T[] = [];
  try {
    for await (const item of items) {
      page.push(item);
      if (page.length >= pageSize) {
        const full = page;
        page = [];
        yield full;
      }
    }
  } catch (e) {
    if (page.length > 0) yield page;
    throw e;
  }
  if (page.length > 0) yield page;
}

/**
 * A stream's events a page at a time (see `EventStore.readPages`): the store's own pages when it has them,
 * otherwise `read` grouped into pages of `pageSize` (default {@link DEFAULT_READ_PAGE_SIZE}).
 */
export const readStreamPages = (
  store: Pick<EventStore, 'read' | 'readPages'>,
  stream: string,
  options: ReadPagesOptions = {},
): AsyncIterable<readonly RecordedEvent[]> =>
  store.readPages !== undefined
    ? store.readPages(stream, options)
    : pagesOf(store.read(stream, options), pageSizeOf(options, DEFAULT_READ_PAGE_SIZE));

/** What {@link subscribeStreamPages} yields: a page of events (stored or live), or the one `caught-up` marker. */
export type PagedSubscriptionMessage =
  | { readonly kind: 'events'; readonly events: readonly RecordedEvent[] }
  | { readonly kind: 'caught-up' };

/** Options of {@link subscribeStreamPages}. */
export interface SubscribePagesOptions {
  /** First revision to deliver (inclusive). @defaultValue 0 */
  readonly from?: bigint;
  /** Aborting ends the iteration. */
  readonly signal?: AbortSignal;
  /** Most events a stored page holds (see `ReadPagesOptions.pageSize`). */
  readonly pageSize?: number;
}

/** A subscription's messages as paged ones: each event a page of one. */
export async function* pagedMessagesOf(messages: AsyncIterable<SubscriptionMessage>): AsyncGenerator<PagedSubscriptionMessage> {
  for await (const message of messages) yield message.kind === 'event' ? { kind: 'events', events: [message.event] } : message;
}

/**
 * `EventStore.subscribe`, with the stored part read a page at a time: the events from `from` as the store's pages
 * (`EventStore.readPages`), one `caught-up`, then the store's own subscription from the revision after the last
 * event delivered, each of its events a page of one (its own `caught-up` marker, which comes after the events
 * appended in the meantime, is not repeated). The subscription starts exactly after the last event delivered: no
 * gap and no duplicate at the switch. A store without `readPages` (EventStoreDB, whose server subscription does its
 * own catch-up) is subscribed to from `from` directly, each event a page of one. Aborting `signal` ends the
 * iteration between pages.
 */
export async function* subscribeStreamPages(
  store: Pick<EventStore, 'read' | 'readPages' | 'subscribe'>,
  stream: string,
  options: SubscribePagesOptions = {},
): AsyncGenerator<PagedSubscriptionMessage> {
  const { signal } = options;
  const from = options.from ?? 0n;
  yield* pagesThenLive(
    signal,
    store.readPages === undefined ? null : () => readStreamPages(store, stream, { from, ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}) }),
    (last) => store.subscribe(stream, { from: last === null ? from : last.revision + 1n, ...(signal !== undefined ? { signal } : {}) }),
  );
}

/**
 * The stored pages `pages` reads (null: the store has none, and its subscription does the catch-up), one `caught-up`,
 * then the subscription that `subscribeAfter` opens after the last event delivered (null: none was), each of its
 * events a page of one and its own `caught-up` not repeated. Aborting `signal` ends the iteration between pages.
 */
async function* pagesThenLive(
  signal: AbortSignal | undefined,
  pages: (() => AsyncIterable<readonly RecordedEvent[]>) | null,
  subscribeAfter: (last: RecordedEvent | null) => AsyncIterable<SubscriptionMessage>,
): AsyncGenerator<PagedSubscriptionMessage> {
  if (signal?.aborted) return;
  if (pages === null) {
    yield* pagedMessagesOf(subscribeAfter(null));
    return;
  }
  let last: RecordedEvent | null = null;
  for await (const events of pages()) {
    if (signal?.aborted) return;
    last = events[events.length - 1]!;
    yield { kind: 'events', events };
  }
  if (signal?.aborted) return;
  yield { kind: 'caught-up' };
  for await (const message of subscribeAfter(last)) {
    if (signal?.aborted) return;
    if (message.kind === 'event') yield { kind: 'events', events: [message.event] };
  }
}

/**
 * Every stream's events a page at a time (see `EventStore.readAllPages`): the store's own pages when it has them,
 * otherwise `readAll` grouped into pages of `pageSize` (default {@link DEFAULT_READ_PAGE_SIZE}). Either way, the
 * events of `readAll(options)`, in the same order, and the error it ends with.
 */
export const readAllPages = (
  store: Pick<EventStore, 'readAll' | 'readAllPages'>,
  options: ReadAllPagesOptions = {},
): AsyncIterable<readonly RecordedEvent[]> => {
  if (store.readAllPages !== undefined) return store.readAllPages(options);
  const { pageSize, ...readOptions } = options;
  return pagesOf(store.readAll(readOptions), pageSizeOf({ ...(pageSize !== undefined ? { pageSize } : {}) }, DEFAULT_READ_PAGE_SIZE));
};

/** Options of {@link subscribeAllPages}. */
export interface SubscribeAllPagesOptions {
  /** Deliver events whose global position is strictly greater than `after`. @defaultValue from the beginning */
  readonly after?: bigint;
  /** Aborting ends the iteration. */
  readonly signal?: AbortSignal;
  /** Most events a stored page holds (see `ReadAllPagesOptions.pageSize`). */
  readonly pageSize?: number;
  /** Only the events of the streams in these partitions (see `ReadAllOptions.partition`). @defaultValue every stream */
  readonly partition?: StreamPartitionFilter;
}

/**
 * `EventStore.subscribeAll`, with the stored part read a page at a time: the events after `after` as the store's
 * pages (`EventStore.readAllPages`), one `caught-up`, then the store's own `subscribeAll` after the global position
 * of the last event delivered, each of its events a page of one (its own `caught-up` marker, which comes after the
 * events appended in the meantime, is not repeated). The subscription starts exactly after the last event
 * delivered: no gap and no duplicate at the switch. A store without `readAllPages` (EventStoreDB, whose server
 * subscription does its own catch-up; batching its `readAll` would still cost a step per event) is subscribed to
 * after `after` directly, each event a page of one. Aborting `signal` ends the iteration between pages.
 */
export async function* subscribeAllPages(
  store: Pick<EventStore, 'readAll' | 'readAllPages' | 'subscribeAll'>,
  options: SubscribeAllPagesOptions = {},
): AsyncGenerator<PagedSubscriptionMessage> {
  const { signal, after, partition } = options;
  const filter = partition !== undefined ? { partition } : {};
  yield* pagesThenLive(
    signal,
    store.readAllPages === undefined
      ? null
      : () => readAllPages(store, { ...(after !== undefined ? { after } : {}), ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}), ...filter }),
    (last) => {
      const from = last === null ? after : last.position;
      return store.subscribeAll({ ...(from !== undefined ? { after: from } : {}), ...(signal !== undefined ? { signal } : {}), ...filter });
    },
  );
}
