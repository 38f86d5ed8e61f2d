import type { EventStore, StreamRevision } from './event-store.js';

/**
 * The optional store capability retention needs: deleting a whole stream. It is a separate port, not part of
 * `EventStore`, because a store that cannot delete (or a caller's own store) remains a complete event store; the
 * `archive` command refuses a store without it. The memory, JSONL, PostgreSQL and EventStoreDB/KurrentDB stores
 * implement it and pass the same deletion contract (test/contract/); EventStoreDB/KurrentDB with the server's
 * tombstone, whose events the server's `$all` keeps until a scavenge (the store's `readAll` skips them).
 *
 * After `deleteStream` resolves, and in every later instance opened on the same data: `read` yields nothing,
 * `revision` is `'no_stream'`, `readAll` skips the stream's events (the other events keep their global positions),
 * and the id is retired — `append` to it and a second `deleteStream` fail with `StreamDeletedError`. A crash during
 * a deletion leaves the stream either whole or deleted.
 */
export interface StreamDeletion {
  /**
   * Deletes every event of `stream` if its last revision is exactly `expected` (so an event appended after the
   * caller looked is never deleted unseen).
   * @throws ConcurrencyError when the stream's revision is not `expected` (or the stream does not exist): nothing deleted
   * @throws StreamDeletedError when the stream was deleted before
   * @throws InvalidStreamIdError, StoreIoError (nothing deleted), StoreClosedError
   */
  deleteStream(stream: string, expected: StreamRevision, options?: DeleteStreamOptions): Promise<void>;
}

/** Options of {@link StreamDeletion.deleteStream}. */
export interface DeleteStreamOptions {
  /** Why, as the store records it where it keeps a record of deletions (PostgreSQL: the `archived_streams` table). */
  readonly reason?: string;
}

/** An event store that can delete streams. */
export type DeletableEventStore = EventStore & StreamDeletion;

/** Does this store implement {@link StreamDeletion}? */
export const canDeleteStreams = (store: EventStore): store is DeletableEventStore =>
  typeof (store as Partial<StreamDeletion>).deleteStream === 'function';
