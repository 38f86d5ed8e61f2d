/**
 * What the EventStoreDB adapter needs from a gRPC client package, as plain structural types: the same adapter code
 * runs on `@eventstore/db-client` 6.2.1 (`esdb://`) and on its successor `@kurrent/kurrentdb-client` 1.3.1
 * (`kurrentdb://`). Nothing here imports either package: each entry point injects its own client and driver, so
 * loading one never loads the other (their generated protobuf messages register the same global names and break
 * each other when both are loaded in one process).
 */

/** A `$all` position as both clients give it: a pair of uint64, ordered commit first. */
export interface WirePosition {
  /** Commit position. */
  readonly commit: bigint;
  /** Prepare position. */
  readonly prepare: bigint;
}

/** An event to append, in the shape both clients' `jsonEvent` produce. */
export interface WireEventData {
  /** The event id (a UUID). */
  readonly id: string;
  /** Always JSON here. */
  readonly contentType: 'application/json';
  /** The event type. */
  readonly type: string;
  /** The JSON data (serialized by the client). */
  readonly data: unknown;
  /** The JSON custom metadata (serialized by the client). */
  readonly metadata: unknown;
}

/** A recorded event as both clients return it (the fields the adapter reads). */
export interface WireRecordedEvent {
  /** The server stream. */
  readonly streamId: string;
  /** The event's revision in its stream. */
  readonly revision: bigint;
  /** The event type. */
  readonly type: string;
  /** The event id. */
  readonly id: string;
  /** Whether `data` was parsed as JSON (otherwise bytes). */
  readonly isJson: boolean;
  /** Parsed JSON, or the raw bytes. */
  readonly data: unknown;
  /** Parsed custom metadata, or the raw bytes. */
  readonly metadata: unknown;
  /** When the server stored it. */
  readonly created: Date;
  /** Its `$all` position, when the server gave one. */
  readonly position?: WirePosition;
}

/** A read or subscription item: a link may come without its event. */
export interface WireResolvedEvent {
  /** The event (absent for a link whose event is gone). */
  readonly event?: WireRecordedEvent;
}

/** A read start: `START`, `END`, a revision or a position. */
export type WireReadFrom = string | bigint | WirePosition;

/** The client calls the adapter makes, as structural types both clients satisfy (at run time). */
export interface WireClient {
  /** Appends; rejects with the client's error classes (matched on their `type`). */
  appendToStream(stream: string, events: WireEventData[], options: Record<string, unknown>): Promise<{ nextExpectedRevision: bigint; position?: WirePosition }>;
  /**
   * Hard-deletes a stream (gRPC `Streams.Tombstone`): the server writes a `$streamDeleted` tombstone, after which the
   * stream reads as deleted and refuses appends for good. Both clients name the expected revision `expectedRevision`
   * here (kurrentdb 1.x too); rejects with the client's error classes (`wrong-expected-version`, `stream-deleted`, …).
   */
  tombstoneStream(stream: string, options: Record<string, unknown>): Promise<{ position?: WirePosition }>;
  /** A stream read: a `Readable` with `cancel()` (esdb) or an async generator (kurrentdb). */
  readStream(stream: string, options: { direction?: string; fromRevision?: WireReadFrom; maxCount?: number }): AsyncIterable<WireResolvedEvent>;
  /** A `$all` read, shaped as `readStream`'s. */
  readAll(options: { direction?: string; fromPosition?: WireReadFrom; maxCount?: number }): AsyncIterable<WireResolvedEvent>;
  /** A stream subscription (a `Readable` emitting `caughtUp`). */
  subscribeToStream(stream: string, options: { fromRevision: WireReadFrom }): unknown;
  /** A `$all` subscription (a `Readable` emitting `caughtUp`). */
  subscribeToAll(options: { fromPosition: WireReadFrom; filter: unknown }): unknown;
  /** Closes the client's channels. */
  dispose(): Promise<void>;
}

/**
 * What differs between the two client packages, taken from the package itself by its entry point: the constants
 * (`START`, `END`, `ANY`, `NO_STREAM`, `STREAM_EXISTS`), the filter factory, the name of the append option that
 * carries the expected revision, and the product name used in messages.
 * @internal
 */
export interface ClientDriver {
  /** `EventStoreDB` or `KurrentDB`, in error messages. */
  readonly product: string;
  /** The client package, in error messages. */
  readonly packageName: string;
  /** The client's read start constants. */
  readonly START: string;
  /** The client's read end constant. */
  readonly END: string;
  /** The client's expected-revision constants. */
  readonly ANY: string;
  /** The client's `no_stream` constant. */
  readonly NO_STREAM: string;
  /** The client's `stream_exists` constant. */
  readonly STREAM_EXISTS: string;
  /** The client's stream-name filter factory (for `$all` subscriptions). */
  readonly streamNameFilter: (filter: { prefixes: string[] }) => unknown;
  /** `expectedRevision` (esdb 6.x) or `streamState` (kurrentdb 1.x). */
  readonly expectedRevisionOption: 'expectedRevision' | 'streamState';
}
