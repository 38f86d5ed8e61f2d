/**
 * The EventStore port on EventStoreDB, through `@eventstore/db-client` 6.2.1 (pinned exactly: the adapter relies
 * on that version's behaviour, see docs/store-eventstoredb.md).
 *
 * Checked against an in-process protocol fake built from the client's own gRPC stubs, not against a real server.
 */
import { END, EventStoreDBClient, excludeSystemEvents, START, type ResolvedEvent } from '@eventstore/db-client';
import type { Readable } from 'node:stream';
import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type GlobalPosition,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeAllOptions,
  type SubscribeOptions,
  type SubscriptionMessage,
} from '../../../runtime/ports/event-store.js';
import { StoreClosedError, type ActualRevision } from '../../../runtime/ports/store-errors.js';
import {
  assertValidBatch,
  assertValidExpected,
  assertValidStreamId,
  concurrencyError,
  DEFAULT_MAX_EVENT_BYTES,
  expectedRevisionMatches,
  idempotencyVerdict,
} from '../../../runtime/ports/store-validation.js';
import {
  assertNotSystemStream,
  fromResolved,
  isStreamNotFound,
  isSystemEvent,
  isWrongExpectedVersion,
  packPosition,
  toConcurrencyError,
  toEsdbEvent,
  toEsdbExpected,
  toStoreError,
  unpackPosition,
} from './mapping.js';

/** Options of the EventStoreDB store. */
export interface EventStoreDbStoreOptions {
  /** Largest serialized event accepted (checked before sending). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** How many streams' id indexes (used for idempotency checks) to keep, least recently used first out. @defaultValue 1000 */
  readonly idIndexStreams?: number;
}

/** Options of {@link openEventStoreDbStore}: the store options with a client or a connection string. */
export type OpenEventStoreDbStoreOptions = EventStoreDbStoreOptions &
  (
    | {
        /** `esdb://host:2113?tls=false`, `esdb+discover://…`: parsed by the client. The store owns that client and disposes it on close. */
        readonly connectionString: string;
      }
    | {
        /** A client the caller owns: `close()` ends this store's reads and subscriptions but does not dispose the client. */
        readonly client: EventStoreDBClient;
      }
  );

/** Parses an `esdb://` / `esdb+discover://` connection string into a client (the client connects lazily). */
export const clientFromConnectionString = (connectionString: string): EventStoreDBClient => {
  if (typeof connectionString !== 'string' || !/^esdb(\+discover)?:\/\//i.test(connectionString)) {
    throw new TypeError(`EventStoreDB connection string must start with esdb:// or esdb+discover://, got ${JSON.stringify(String(connectionString)).slice(0, 80)}`);
  }
  try {
    return EventStoreDBClient.connectionString(connectionString);
  } catch (e) {
    throw new TypeError(`invalid EventStoreDB connection string: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
};

/** Opens the EventStoreDB store on a client or a connection string. */
export const openEventStoreDbStore = (options: OpenEventStoreDbStoreOptions): EventStoreDbEventStore =>
  'client' in options
    ? new EventStoreDbEventStore(options.client, false, options)
    : new EventStoreDbEventStore(clientFromConnectionString(options.connectionString), true, options);

/** What the adapter knows about one stream's stored ids: enough to decide idempotency without rereading it. */
interface IdIndex {
  readonly revisionOfId: Map<string, bigint>;
  /** Revision of the last indexed event, -1 when none. */
  last: bigint;
  lastPosition: GlobalPosition;
}

/** The client's subscription object, with the (runtime-public, typed-protected) conversion hook it calls per event. */
type ClientSubscription = Readable & {
  unsubscribe(): Promise<void>;
  convertGrpcEvent: (e: unknown) => ResolvedEvent;
};
type ClientRead = Readable & { cancel(): Promise<void> };

const NEVER = new Promise<never>(() => {});

/** The EventStore port on EventStoreDB, through `@eventstore/db-client`. */
export class EventStoreDbEventStore implements EventStore {
  readonly #client: EventStoreDBClient;
  readonly #ownsClient: boolean;
  readonly #maxEventBytes: number;
  readonly #indexLimit: number;
  readonly #indexes = new Map<string, IdIndex>();
  /** Aborted on close: ends every live subscription and pending read of this store. */
  readonly #closing = new AbortController();
  #closed = false;

  constructor(client: EventStoreDBClient, ownsClient: boolean, options: EventStoreDbStoreOptions = {}) {
    this.#client = client;
    this.#ownsClient = ownsClient;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#indexLimit = Math.max(1, options.idIndexStreams ?? 1000);
  }

  /** The underlying client, for diagnostics. */
  get client(): EventStoreDBClient {
    return this.#client;
  }

  /** The largest event this store accepts (the `maxEventBytes` option). */
  get maxEventBytes(): number {
    return this.#maxEventBytes;
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    this.#assertStream(stream);
    assertValidExpected(expected);
    assertValidBatch(stream, events, this.#maxEventBytes);

    // Idempotency first, as the port orders it: a batch whose ids are all stored, in order, is a no-op whatever
    // `expected` says; a batch repeating only some stored ids is refused. The server alone cannot say the latter.
    let index = await this.#refreshIndex(stream);
    const verdict = idempotencyVerdict(stream, events, (id) => index.revisionOfId.get(id));
    if (verdict.kind === 'already-appended') return this.#alreadyAppended(stream, verdict.lastRevision);

    if (events.length === 0) {
      const actual = actualOf(index);
      if (!expectedRevisionMatches(expected, actual)) throw concurrencyError(stream, expected, actual);
      return { nextExpectedRevision: streamRevision(index.last), position: index.lastPosition };
    }

    try {
      const result = await this.#client.appendToStream(stream, events.map(toEsdbEvent), { expectedRevision: toEsdbExpected(expected) });
      const position = result.position ? packPosition(result.position) : globalPosition(-1);
      this.#recordAppend(stream, events, result.nextExpectedRevision, position);
      return { nextExpectedRevision: streamRevision(result.nextExpectedRevision), position };
    } catch (e) {
      if (!isWrongExpectedVersion(e)) throw toStoreError(e, `append to "${stream}"`);
      // Another writer got there first, or wrote this very batch: look again before calling it a conflict.
      index = await this.#refreshIndex(stream);
      const again = idempotencyVerdict(stream, events, (id) => index.revisionOfId.get(id));
      if (again.kind === 'already-appended') return this.#alreadyAppended(stream, again.lastRevision);
      throw toConcurrencyError(stream, expected, e, actualOf(index));
    }
  }

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    this.#assertStream(stream);
    const backwards = options.direction === 'backwards';
    const maxCount = Math.min(Math.floor(options.maxCount ?? Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
    if (!(maxCount > 0)) return;
    const from = options.from;
    if (from !== undefined && from < 0n && backwards) return; // nothing before revision 0
    const read = this.#client.readStream(stream, {
      direction: backwards ? 'backwards' : 'forwards',
      fromRevision: from === undefined || from < 0n ? (backwards ? END : START) : from,
      maxCount,
    }) as unknown as ClientRead;
    for await (const resolved of this.#iterate(read, `read "${stream}"`)) yield fromResolved(resolved);
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    this.#assertStream(stream);
    const from = options.from ?? 0n;
    // Server subscriptions start strictly after the given revision; the port's `from` is inclusive.
    const open = (): ClientSubscription =>
      this.#client.subscribeToStream(stream, { fromRevision: from <= 0n ? START : from - 1n }) as unknown as ClientSubscription;
    return this.#subscription(open, (e) => e.revision >= from, options.signal, `subscribe to "${stream}"`);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const after = options.after;
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return;
    // The server's read from a position includes it; skipping by position also hides system events, which the
    // port never shows, so the count is applied here rather than sent to the server.
    const read = this.#client.readAll({ fromPosition: after === undefined || after < 0n ? START : unpackPosition(after) }) as unknown as ClientRead;
    let count = 0;
    for await (const resolved of this.#iterate(read, 'readAll')) {
      if (isSystemEvent(resolved)) continue;
      const event = fromResolved(resolved);
      if (after !== undefined && event.position <= after) continue;
      yield event;
      if (++count >= max) return;
    }
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    const after = options.after;
    const open = (): ClientSubscription =>
      this.#client.subscribeToAll({
        fromPosition: after === undefined || after < 0n ? START : unpackPosition(after),
        filter: excludeSystemEvents(),
      }) as unknown as ClientSubscription;
    return this.#subscription(open, (e) => after === undefined || e.position > after, options.signal, 'subscribeAll', true);
  }

  async revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    this.#assertOpen();
    this.#assertStream(stream);
    for await (const e of this.read(stream, { direction: 'backwards', maxCount: 1 })) return e.revision;
    return 'no_stream';
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#indexes.clear();
    if (this.#ownsClient) await this.#client.dispose();
  }

  // ---- internals ----

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }

  #assertStream(stream: string): void {
    assertValidStreamId(stream);
    assertNotSystemStream(stream);
  }

  /** Iterates a client read, mapping "stream not found" to nothing and other errors to port errors; cancels the call on early exit. */
  async *#iterate(read: ClientRead, what: string): AsyncGenerator<ResolvedEvent> {
    let finished = false;
    const onClose = (): void => {
      void read.cancel().catch(() => {});
      read.destroy();
    };
    this.#closing.signal.addEventListener('abort', onClose, { once: true });
    try {
      for await (const resolved of read as AsyncIterable<ResolvedEvent>) {
        if (this.#closed) return;
        yield resolved;
      }
      finished = true;
    } catch (e) {
      finished = true;
      if (isStreamNotFound(e)) return;
      if (this.#closed) return;
      throw toStoreError(e, what);
    } finally {
      this.#closing.signal.removeEventListener('abort', onClose);
      if (!finished) {
        void read.cancel().catch(() => {});
        read.destroy();
      }
    }
  }

  /**
   * A client subscription as port messages: events in order, one `caught-up` where the server's `caught_up`
   * message fell in the event sequence, then live events. The client emits `caughtUp` as a side event while its
   * events are buffered, so the adapter counts the events the client had converted when `caughtUp` fired and
   * places the marker after that many.
   */
  #subscription(
    open: () => ClientSubscription,
    keep: (e: RecordedEvent) => boolean,
    signal: AbortSignal | undefined,
    what: string,
    filterSystem = false,
  ): AsyncIterable<SubscriptionMessage> {
    const closing = this.#closing.signal;
    const isClosed = (): boolean => this.#closed;
    return {
      async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionMessage> {
        if (signal?.aborted || isClosed()) return;
        const sub = open();
        let converted = 0;
        const convert = sub.convertGrpcEvent;
        if (typeof convert !== 'function') throw new Error('unsupported @eventstore/db-client version: no subscription conversion hook');
        sub.convertGrpcEvent = (e: unknown): ResolvedEvent => {
          converted++;
          return convert.call(sub, e);
        };
        let caughtUpAt: number | null = null;
        let markCaughtUp: () => void = () => {};
        const caughtUp = new Promise<'caught-up'>((resolve) => {
          markCaughtUp = () => resolve('caught-up');
        });
        sub.on('caughtUp', () => {
          if (caughtUpAt === null) {
            caughtUpAt = converted;
            markCaughtUp();
          }
        });
        let onStop: () => void = () => {};
        const stopped = new Promise<'stop'>((resolve) => {
          onStop = () => resolve('stop');
        });
        signal?.addEventListener('abort', onStop, { once: true });
        closing.addEventListener('abort', onStop, { once: true });

        const iterator = (sub as AsyncIterable<ResolvedEvent>)[Symbol.asyncIterator]();
        let pending: Promise<IteratorResult<ResolvedEvent>> | null = null;
        let consumed = 0;
        let sentCaughtUp = false;
        try {
          for (;;) {
            if (signal?.aborted || isClosed()) return;
            if (!sentCaughtUp && caughtUpAt !== null && consumed >= caughtUpAt) {
              sentCaughtUp = true;
              yield { kind: 'caught-up' };
              continue;
            }
            pending ??= iterator.next();
            const next = await Promise.race([pending, stopped, caughtUpAt === null ? caughtUp : NEVER]);
            if (next === 'stop') return;
            if (next === 'caught-up') continue;
            pending = null;
            if (next.done) return;
            consumed++;
            if (filterSystem && isSystemEvent(next.value)) continue;
            const event = fromResolved(next.value);
            if (keep(event)) yield { kind: 'event', event };
          }
        } catch (e) {
          if (signal?.aborted || isClosed()) return;
          throw toStoreError(e, what);
        } finally {
          signal?.removeEventListener('abort', onStop);
          closing.removeEventListener('abort', onStop);
          pending?.catch(() => {});
          void sub.unsubscribe().catch(() => {});
          sub.destroy();
        }
      },
    };
  }

  /** Brings the stream's id index up to date by reading only the events after the last indexed one. */
  async #refreshIndex(stream: string): Promise<IdIndex> {
    let index = this.#indexes.get(stream);
    if (index) {
      this.#indexes.delete(stream); // re-insert: most recently used last
    } else {
      index = { revisionOfId: new Map(), last: -1n, lastPosition: globalPosition(-1) };
    }
    this.#indexes.set(stream, index);
    while (this.#indexes.size > this.#indexLimit) this.#indexes.delete(this.#indexes.keys().next().value!);
    const read = this.#client.readStream(stream, { fromRevision: index.last < 0n ? START : index.last + 1n }) as unknown as ClientRead;
    for await (const resolved of this.#iterate(read, `read "${stream}"`)) {
      const e = fromResolved(resolved);
      if (e.revision <= index.last) continue; // a concurrent refresh got there first
      index.revisionOfId.set(e.id, e.revision);
      index.last = e.revision;
      index.lastPosition = e.position;
    }
    return index;
  }

  #recordAppend(stream: string, events: readonly NewEvent[], next: bigint, position: GlobalPosition): void {
    const index = this.#indexes.get(stream);
    const first = next - BigInt(events.length) + 1n;
    if (!index || index.last !== first - 1n) return; // someone else wrote in between: the next refresh reads it
    events.forEach((e, i) => index.revisionOfId.set(e.id, first + BigInt(i)));
    index.last = next;
    index.lastPosition = position;
  }

  async #alreadyAppended(stream: string, lastRevision: bigint): Promise<AppendResult> {
    for await (const e of this.read(stream, { from: lastRevision, maxCount: 1 })) {
      return { nextExpectedRevision: e.revision, position: e.position };
    }
    return { nextExpectedRevision: streamRevision(lastRevision), position: globalPosition(-1) };
  }
}

const actualOf = (index: IdIndex): ActualRevision => (index.last < 0n ? 'no_stream' : streamRevision(index.last));
