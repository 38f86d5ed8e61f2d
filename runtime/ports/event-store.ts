import type { Brand } from '../../domain/brand.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import type { StreamPartitionFilter } from './stream-partition.js';

/**
 * The EventStore port: what the runtime needs from any store (memory, JSONL, PostgreSQL, EventStoreDB).
 * Every implementation passes the shared contract suite in test/contract/.
 */

/** 0-based position of an event inside its stream. Equal to the session envelope's `seq`. */
export type StreamRevision = Brand<bigint, 'StreamRevision'>;
/** Position of an event in the store's global order (readAll). Monotonic, not necessarily contiguous. */
export type GlobalPosition = Brand<bigint, 'GlobalPosition'>;

/** Brands a bigint as a stream revision (a non-negative integer). */
export const streamRevision = (n: bigint | number): StreamRevision => BigInt(n) as StreamRevision;
/** Brands a bigint as a global position (a non-negative integer). */
export const globalPosition = (n: bigint | number): GlobalPosition => BigInt(n) as GlobalPosition;

/**
 * What the writer believes about the stream before its append:
 * - `'any'`: no check;
 * - `'no_stream'`: the stream has no event;
 * - `'stream_exists'`: the stream has at least one event;
 * - a revision: the stream's last event has exactly this revision.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

/** An event as the caller hands it to `append`. The store assigns revision and position. */
export interface NewEvent {
  /** Stable id; re-appending the same ids is an idempotent no-op. */
  readonly id: string;
  readonly type: string;
  /** Epoch milliseconds, set by the writer's (injectable) clock. */
  readonly time: number;
  /** Lossless JSON. */
  readonly data: unknown;
  /** A reader that does not know `type` may skip this event instead of refusing the log. */
  readonly ignorable?: true;
  /** Provenance (actor, correlation, causation, user keys): lossless JSON, kept verbatim. */
  readonly metadata?: EventMetadata;
  /** The event's chain hash, computed by the writer (64 hex digits): kept verbatim, never computed by a store. */
  readonly hash?: string;
}

/** An event as a store returns it. */
export interface RecordedEvent extends NewEvent {
  readonly stream: string;
  readonly revision: StreamRevision;
  readonly position: GlobalPosition;
}

/** What a successful append returns: the revision to expect next and the global position of the last event written. */
export interface AppendResult {
  /** The revision of the stream's last event after the append: pass it as `expected` next time. */
  readonly nextExpectedRevision: StreamRevision;
  /** Global position of the batch's last event. */
  readonly position: GlobalPosition;
}

/** Which way a read goes. */
export type ReadDirection = 'forwards' | 'backwards';

/** Options of `EventStore.read`: start revision, direction and maximum count. */
export interface ReadStreamOptions {
  /**
   * First revision to return (inclusive). Defaults to the start (forwards) or the end (backwards).
   * @defaultValue start or end of the stream, by direction
   */
  readonly from?: bigint;
  /** @defaultValue 'forwards' */
  readonly direction?: ReadDirection;
  /** @defaultValue unlimited */
  readonly maxCount?: number;
}

/** Options of `EventStore.readPages`: those of `read`, plus the most events a page holds. */
export interface ReadPagesOptions extends ReadStreamOptions {
  /**
   * Most events one page holds; rounded down, and at least 1 (`Infinity`: the store's own page). A store may hand
   * out smaller pages (never an empty one): the JSONL store's pages are the lines one 256 KiB file read completes.
   * @defaultValue the store's own page (JSONL: one file read; PostgreSQL: its `readPageSize` option; otherwise
   *   `DEFAULT_READ_PAGE_SIZE`, 512)
   */
  readonly pageSize?: number;
}

/** Options of the all-streams read: the global position to start after, and how many events at most. */
export interface ReadAllOptions {
  /** Return events whose global position is strictly greater than `after`. @defaultValue from the beginning */
  readonly after?: bigint;
  /** @defaultValue unlimited */
  readonly maxCount?: number;
  /**
   * Only the events of the streams in these partitions (see `StreamPartitionFilter`): the PostgreSQL and JSONL
   * stores then skip the others without decoding them. A store that cannot filter ignores it (its reader checks).
   * `maxCount` counts the events handed out. @defaultValue every stream
   */
  readonly partition?: StreamPartitionFilter;
}

/** Options of `EventStore.readAllPages`: those of `readAll`, plus the most events a page holds. */
export interface ReadAllPagesOptions extends ReadAllOptions {
  /**
   * Most events one page holds; rounded down, and at least 1 (`Infinity`: the store's own page). A store may hand
   * out smaller pages (never an empty one): the JSONL store's pages are the events of one read of its global index
   * (512 records).
   * @defaultValue the store's own page (JSONL: one index read; PostgreSQL: its `readPageSize` option; otherwise
   *   `DEFAULT_READ_PAGE_SIZE`, 512)
   */
  readonly pageSize?: number;
}

/** Options of `EventStore.subscribe`: the revision to start from, and the abort signal that ends it. */
export interface SubscribeOptions {
  /** First revision to deliver (inclusive). @defaultValue 0 */
  readonly from?: bigint;
  /** Aborting ends the iteration. */
  readonly signal?: AbortSignal;
}

/** Options of the all-streams subscription: the global position to start after, and the abort signal that ends it. */
export interface SubscribeAllOptions {
  /** Deliver events whose global position is strictly greater than `after`. @defaultValue from the beginning */
  readonly after?: bigint;
  readonly signal?: AbortSignal;
  /** Only the events of the streams in these partitions, as `ReadAllOptions.partition`. @defaultValue every stream */
  readonly partition?: StreamPartitionFilter;
}

/**
 * What a subscription yields: every stored event in order, then one `caught-up` marker when the
 * historical part is exhausted, then live events as they are appended (no gap, no duplicate).
 */
export type SubscriptionMessage =
  | { readonly kind: 'event'; readonly event: RecordedEvent }
  | { readonly kind: 'caught-up' };

/** The store port every store implements: optimistic-concurrency appends, streaming reads, catch-up-then-live subscriptions and a global order. One shared contract suite checks every implementation. */
export interface EventStore {
  /**
   * The largest event this store accepts, in bytes as `eventSizeBytes` (runtime/ports/store-validation.ts) measures
   * it; a larger one makes `append` fail with EventTooLargeError. The runtime refuses such events before they enter a
   * session's live log.
   */
  readonly maxEventBytes: number;
  /**
   * Largest event this store accepts, in bytes of the port's measure: UTF-8 JSON of `data`, plus `type` and `id`.
   * An admission check can refuse bigger events before they enter a session; `append` refuses them with
   * `EventTooLargeError` either way. Absent when the store does not say (then 1 MiB is the portable bound).
   */
  readonly maxEventSize?: number;
  /**
   * Appends `events` atomically (all or none) if the stream's state matches `expected`.
   * Re-appending a batch whose ids are already stored, in the same order and place, succeeds without writing.
   * @throws ConcurrencyError, InvalidStreamIdError, InvalidEventError, EventTooLargeError, DuplicateEventIdError
   * @throws UnknownOutcomeError when the store cannot tell whether the batch was written (the request was sent,
   *   the answer lost or ambiguous). The batch is then stored completely or not at all — except where a store
   *   documents that it splits large batches (EventStoreDB: whole chunks of a batch larger than the server's request
   *   limit may be stored) — so a caller resolves it by reading the stream's tail: ids and revision say which.
   *   `StoreIoError` and every other error mean nothing was written.
   */
  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** Streams the stream's events; an absent stream yields nothing. */
  read(stream: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  /**
   * Optional: `read` a page at a time — exactly the events `read(stream, options)` yields, in the same order, as
   * non-empty arrays of at most `pageSize` events (an absent stream yields no page). A damaged record ends the read
   * with the same typed error `read` ends with, after the page of the good events before it. A reader then pays one
   * asynchronous step per page instead of one per event. Call it through `readStreamPages`
   * (runtime/ports/paged-reads.ts), which batches `read` for a store that does not implement it. The arrays and
   * the events in them are the reader's to keep: a store does not reuse them.
   */
  readPages?(stream: string, options?: ReadPagesOptions): AsyncIterable<readonly RecordedEvent[]>;
  /** Catch-up then live subscription to one stream. */
  subscribe(stream: string, options?: SubscribeOptions): AsyncIterable<SubscriptionMessage>;
  /** Every stream's events in global (commit) order. */
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  /**
   * Optional: `readAll` a page at a time — exactly the events `readAll(options)` yields, in the same order, as
   * non-empty arrays of at most `pageSize` events (no page when there is no event). A deleted (archived) stream's
   * events are skipped as `readAll` skips them; `maxCount` counts the events handed out. A damaged record ends the
   * read with the same typed error `readAll` ends with, after the page of the good events before it: reading the
   * pages and reading `readAll` one event at a time give the same events, then the same error. A reader pays one
   * asynchronous step per page instead of one per event. Call it through `readAllPages`
   * (runtime/ports/paged-reads.ts), which batches `readAll` for a store that does not implement it. The arrays and
   * the events in them are the reader's to keep: a store does not reuse them.
   */
  readAllPages?(options?: ReadAllPagesOptions): AsyncIterable<readonly RecordedEvent[]>;
  /** Catch-up then live subscription to the global order. */
  subscribeAll(options?: SubscribeAllOptions): AsyncIterable<SubscriptionMessage>;
  /** The revision of the stream's last event, or `'no_stream'`. */
  revision(stream: string): Promise<StreamRevision | 'no_stream'>;
  /** Releases files, connections and live subscriptions (which end). */
  close(): Promise<void>;
}
