/**
 * The EventStore port on EventStoreDB and KurrentDB, over either gRPC client: `@eventstore/db-client` 6.2.1 or
 * `@kurrent/kurrentdb-client` 1.3.1 (each pinned exactly: the adapter relies on their behaviour, see
 * docs/store-eventstoredb.md). The client and what differs between the two packages (their constants, the name of one
 * append option) are injected by the entry point (`steerlog/eventstoredb`, `steerlog/kurrentdb`); this module
 * imports neither package.
 *
 * Checked against an in-process protocol fake built from the clients' own gRPC stubs, not against a real server.
 */
import { setMaxListeners } from 'node:events';
import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeAllOptions,
  type SubscribeOptions,
  type SubscriptionMessage,
} from '../../../runtime/ports/event-store.js';
import { StoreClosedError, StreamDeletedError, UnknownOutcomeError } from '../../../runtime/ports/store-errors.js';
import type { DeleteStreamOptions, StreamDeletion } from '../../../runtime/ports/stream-deletion.js';
import { ESDB_SERVER_LIMITS, splitToFit, type EventStoreDbServerLimits } from './append-limits.js';
import { portSubscription, type ClientSubscription, type Head, type SubscriptionSpec } from './subscription.js';
import { askEach, RetiredStreams } from './retired-streams.js';
import { ClientReads, type ClientRead } from './client-reads.js';
import { actualOf, IdIndex } from './id-index.js';
import type { ClientDriver, WireClient, WireEventData } from './client-driver.js';
import { DEFAULT_STREAM_PREFIX, METADATA_ALLOWANCE, type EventStoreDbStoreOptions } from './store-options.js';
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
  assertNoSystemEventTypes,
  assertNotSystemStream,
  fromResolved,
  isStreamDeleted,
  isWrongExpectedVersion,
  packPosition,
  toAppendError,
  toConcurrencyError,
  toDeleteError,
  toEsdbEvent,
  toEsdbExpected,
  unpackPosition,
} from './mapping.js';

export { credentialsFor, DEFAULT_STREAM_PREFIX, METADATA_ALLOWANCE, type EventStoreDbStoreOptions } from './store-options.js';

/** Events `readAll` reads ahead before asking which of their streams are tombstoned. */
const READ_ALL_PAGE = 256;


/** `controller`, with no limit on its signal's listeners. */
const unlimited = (controller: AbortController): AbortController => {
  setMaxListeners(0, controller.signal);
  return controller;
};

/**
 * The EventStore port over an EventStoreDB/KurrentDB gRPC client: the code `EventStoreDbEventStore`
 * (`steerlog/eventstoredb`) and `KurrentDbEventStore` (`steerlog/kurrentdb`) share. Not constructed directly.
 * It implements `StreamDeletion` with the server's tombstone (hard delete): see `deleteStream`.
 */
export abstract class GrpcEventStore implements EventStore, StreamDeletion {
  readonly #client: WireClient;
  readonly #driver: ClientDriver;
  readonly #ownsClient: boolean;
  readonly #maxEventBytes: number;
  readonly #limits: EventStoreDbServerLimits;
  readonly #prefix: string;
  /** Per-call credentials when appends take the Append path; undefined: BatchAppend (when the server offers it). */
  readonly #appendCredentials: { readonly username: string; readonly password: string } | undefined;
  /** Each recently used stream's stored ids: an append's idempotency is decided without rereading the stream. */
  readonly #ids: IdIndex;
  /** Tombstoned streams, whose events `$all` still holds until a scavenge (see retired-streams.ts). */
  readonly #retired: RetiredStreams;
  readonly #reads: ClientReads;
  /**
   * Aborted on close: ends every live subscription and pending read of this store. Each of them listens to it, so
   * its signal has no listener limit (Node warns at 11 otherwise: a readAll's stream probes alone can exceed that).
   */
  readonly #closing = unlimited(new AbortController());
  #closed = false;

  /** @internal The entry point passes its client package's driver. */
  protected constructor(client: WireClient, driver: ClientDriver, ownsClient: boolean, options: EventStoreDbStoreOptions = {}) {
    this.#client = client;
    this.#driver = driver;
    this.#ownsClient = ownsClient;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#limits = options.serverLimits ?? ESDB_SERVER_LIMITS.upTo25_0;
    this.#prefix = options.streamPrefix ?? DEFAULT_STREAM_PREFIX;
    if (this.#prefix.length === 0 || this.#prefix.startsWith('$')) throw new TypeError(`streamPrefix must be non-empty and not start with "$", got ${JSON.stringify(this.#prefix)}`);
    this.#appendCredentials = (options.appendRpc ?? 'append') === 'append' ? options.credentials : undefined;
    const indexLimit = Math.max(1, options.idIndexStreams ?? 1000);
    this.#ids = new IdIndex((stream, from) => this.#readForIndex(stream, from), indexLimit);
    this.#reads = new ClientReads({
      client,
      driver,
      prefix: this.#prefix,
      closing: this.#closing.signal,
      isClosed: () => this.#closed,
      onDeleted: (stream) => {
        this.#retired.add(stream);
        this.#ids.delete(stream);
      },
      isDeleted: (stream) => this.#retired.has(stream),
    });
    this.#retired = new RetiredStreams((stream) => this.#reads.isTombstoned(stream), 10 * indexLimit);
  }

  /**
   * Largest event this store accepts, in the port's measure (UTF-8 bytes of the JSON data + type + id): the
   * smaller of `maxEventBytes` and the server's per-event limit less what steerlog's own metadata takes. An event
   * with a long type can still be refused at append, where the server's measure counts the type twice.
   */
  get maxEventSize(): number {
    const server = Math.min(this.#limits.maxEventSize, this.#limits.maxAppendSize) - METADATA_ALLOWANCE;
    return Math.max(0, Math.min(this.#maxEventBytes, server));
  }

  /** The largest event this store accepts: `maxEventSize` (the option, bounded by the server's limits). */
  get maxEventBytes(): number {
    return this.maxEventSize;
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    this.#assertStream(stream);
    assertValidExpected(expected);
    // the limit it exposes is the limit it enforces: the option, bounded by the server's own
    assertValidBatch(stream, events, this.maxEventBytes);
    assertNoSystemEventTypes(events);
    if (this.#retired.has(stream)) throw new StreamDeletedError(stream);

    // Idempotency first, as the port orders it: a batch whose ids are all stored, in order, is a no-op whatever
    // `expected` says; a batch repeating only some stored ids is refused. The server alone cannot say the latter.
    const index = await this.#ids.refresh(stream);
    const verdict = idempotencyVerdict(stream, events, (id) => index.revisionOfId.get(id));
    if (verdict.kind === 'already-appended') return this.#alreadyAppended(stream, verdict.lastRevision);

    if (events.length === 0) {
      const actual = actualOf(index);
      if (!expectedRevisionMatches(expected, actual)) throw concurrencyError(stream, expected, actual);
      return { nextExpectedRevision: streamRevision(index.last), position: index.lastPosition };
    }

    const esdbEvents = events.map(toEsdbEvent);
    const chunks = splitToFit(esdbEvents, this.#limits);
    if (chunks.length === 1) return this.#appendOne(stream, events, esdbEvents, expected);
    // Larger than one request: consecutive appends, each atomic, the next expecting the revision the last returned.
    // Atomicity ends at each chunk boundary: a failure after the first chunk leaves whole chunks stored.
    let next: ExpectedRevision = expected;
    let done = 0;
    let result: AppendResult | undefined;
    for (const chunk of chunks) {
      const portChunk = events.slice(done, done + chunk.length);
      try {
        result = await this.#appendOne(stream, portChunk, chunk, next);
      } catch (e) {
        if (done === 0) throw e;
        throw new UnknownOutcomeError(
          stream,
          events.length,
          `the batch was split into ${chunks.length} appends to fit the server's ${this.#limits.maxAppendSize}-byte request limit; the first ${done} events were stored, then: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
      done += chunk.length;
      next = result.nextExpectedRevision;
    }
    return result!;
  }

  /** One append call (one server request), with the adapter's idempotency recheck on a wrong expected version. */
  async #appendOne(stream: string, events: readonly NewEvent[], esdbEvents: readonly WireEventData[], expected: ExpectedRevision): Promise<AppendResult> {
    const sent = performance.now();
    try {
      // requiresLeader: a follower refuses (NotLeader, with the leader's address) instead of forwarding the write,
      // so a write is never left waiting on a forward timeout whose outcome is unknown.
      const result = await this.#client.appendToStream(this.#prefix + stream, [...esdbEvents], {
        [this.#driver.expectedRevisionOption]: toEsdbExpected(expected, this.#driver),
        requiresLeader: true,
        ...(this.#appendCredentials ? { credentials: { ...this.#appendCredentials } } : {}),
      });
      const position = result.position ? packPosition(result.position) : globalPosition(-1);
      this.#ids.recordAppend(stream, events, result.nextExpectedRevision, position);
      return { nextExpectedRevision: streamRevision(result.nextExpectedRevision), position };
    } catch (e) {
      if (isStreamDeleted(e)) this.#retired.add(stream);
      if (!isWrongExpectedVersion(e)) throw toAppendError(e, stream, events.length, performance.now() - sent, this.#driver.product);
      // Another writer got there first, or wrote this very batch: look again before calling it a conflict.
      const index = await this.#ids.refresh(stream);
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
    if (this.#retired.has(stream)) return; // tombstoned: the server would answer "stream deleted"
    const { START, END } = this.#driver;
    const read = this.#client.readStream(this.#prefix + stream, {
      direction: backwards ? 'backwards' : 'forwards',
      fromRevision: from === undefined || from < 0n ? (backwards ? END : START) : from,
      maxCount,
    }) as ClientRead;
    for await (const resolved of this.#reads.iterate(read, `read "${stream}"`, { stream, deleted: 'empty' })) yield fromResolved(resolved, this.#prefix);
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    this.#assertStream(stream);
    const from = options.from ?? 0n;
    // Server subscriptions start strictly after the given revision; the port's `from` is inclusive.
    const open = (): ClientSubscription =>
      this.#client.subscribeToStream(this.#prefix + stream, { fromRevision: from <= 0n ? this.#driver.START : from - 1n }) as ClientSubscription;
    // The caught-up point: the stream's last revision when the subscription starts (servers before 24.2 send no caught_up).
    const head = async (): Promise<Head> => {
      const last = await this.revision(stream);
      return last === 'no_stream' || last < from ? 'now' : (e) => e.revision >= last;
    };
    return this.#subscription({ open, head, keep: (e) => e.revision >= from, signal: options.signal, what: `subscribe to "${stream}"`, stream });
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const after = options.after;
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return;
    // The server's read from a position includes it; skipping by position also hides system events, which the
    // port never shows, so the count is applied here rather than sent to the server.
    const read = this.#client.readAll({ fromPosition: after === undefined || after < 0n ? this.#driver.START : unpackPosition(after) }) as ClientRead;
    let count = 0;
    // A tombstoned stream's events stay in $all until a scavenge: read a page of steerlog's events, ask the streams
    // it meets that this read has not asked about (several at a time), then yield the page without theirs.
    const retired = this.#retired.forRead();
    const events = this.#reads.iterate(read, 'readAll');
    let ended = false;
    try {
      while (!ended) {
        const page: RecordedEvent[] = [];
        while (page.length < READ_ALL_PAGE && count + page.length < max) {
          const next = await events.next();
          if (next.done) {
            ended = true;
            break;
          }
          if (!this.#reads.isVisible(next.value)) continue;
          const event = fromResolved(next.value, this.#prefix);
          if (after === undefined || event.position > after) page.push(event);
        }
        await askEach(retired, page.map((e) => e.stream));
        for (const event of page) {
          if (await retired(event.stream)) continue;
          yield event;
          if (++count >= max) return;
        }
      }
    } finally {
      if (!ended) await events.return(undefined);
    }
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    const after = options.after;
    const open = (): ClientSubscription =>
      this.#client.subscribeToAll({
        fromPosition: after === undefined || after < 0n ? this.#driver.START : unpackPosition(after),
        filter: this.#driver.streamNameFilter({ prefixes: [this.#prefix] }),
      }) as ClientSubscription;
    // The caught-up point: the last event the port shows in `$all` when the subscription starts.
    const head = async (): Promise<Head> => {
      const last = await this.#reads.lastVisiblePosition(this.#retired.forRead());
      return last === null || (after !== undefined && last <= after) ? 'now' : (e) => e.position >= last;
    };
    return this.#subscription({
      open,
      head,
      keep: (e) => after === undefined || e.position > after,
      visible: (r) => this.#reads.isVisible(r),
      retired: () => this.#retired.forRead(),
      signal: options.signal,
      what: 'subscribeAll',
    });
  }

  /**
   * Deletes the stream if its last revision is `expected` (StreamDeletion), with the server's tombstone (gRPC
   * `Streams.Tombstone`, on the leader): irreversible — the id can never be written again — and the server reclaims
   * the space at its next scavenge. Until then `$all` still holds the events; `readAll` and `subscribeAll` skip
   * them. A soft delete (`Streams.Delete`) would not do: the stream could be re-created. The server keeps no reason
   * (`options.reason` is not stored: the archive records what it moved).
   *
   * Errors: the server's wrong expected version → `ConcurrencyError` (with the actual revision, `no_stream` when the
   * stream does not exist); its stream-deleted → `StreamDeletedError`; an answer after which the tombstone may have
   * been written (timeout, unavailable) → a `store-io` error saying so (see `toDeleteError`).
   */
  async deleteStream(stream: string, expected: StreamRevision, options: DeleteStreamOptions = {}): Promise<void> {
    void options.reason; // the server keeps no reason (see above)
    this.#assertOpen();
    this.#assertStream(stream);
    // a tombstone is irreversible: only ever against an exact revision
    if (typeof expected !== 'bigint' || expected < 0n) throw new TypeError(`deleteStream needs an exact revision (a bigint >= 0), got ${String(expected)}`);
    if (this.#retired.has(stream)) throw new StreamDeletedError(stream);
    try {
      await this.#client.tombstoneStream(this.#prefix + stream, { expectedRevision: expected, requiresLeader: true });
    } catch (e) {
      if (isStreamDeleted(e)) this.#retired.add(stream);
      if (!isWrongExpectedVersion(e)) throw toDeleteError(e, stream, this.#driver.product);
      throw toConcurrencyError(stream, expected, e, await this.revision(stream));
    }
    this.#ids.delete(stream);
    this.#retired.add(stream);
  }

  async revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    this.#assertOpen();
    this.#assertStream(stream);
    // Read to the end (one event) rather than returning early: the server ends the call by itself, with nothing to
    // cancel (a read left early is cancelled, see ClientReads.iterate).
    let last: StreamRevision | 'no_stream' = 'no_stream';
    for await (const e of this.read(stream, { direction: 'backwards', maxCount: 1 })) last = e.revision;
    return last;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#ids.clear();
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

  #subscription(spec: Omit<SubscriptionSpec, 'closing' | 'isClosed' | 'streamPrefix' | 'product'>): AsyncIterable<SubscriptionMessage> {
    return portSubscription({ ...spec, closing: this.#closing.signal, isClosed: () => this.#closed, streamPrefix: this.#prefix, product: this.#driver.product });
  }

  /** A stream's events from revision `from` on, for the id index; a tombstoned stream throws `StreamDeletedError`. */
  async *#readForIndex(stream: string, from: bigint): AsyncIterable<RecordedEvent> {
    const read = this.#client.readStream(this.#prefix + stream, { fromRevision: from <= 0n ? this.#driver.START : from }) as ClientRead;
    for await (const resolved of this.#reads.iterate(read, `read "${stream}"`, { stream, deleted: 'throw' })) yield fromResolved(resolved, this.#prefix);
  }

  async #alreadyAppended(stream: string, lastRevision: bigint): Promise<AppendResult> {
    for await (const e of this.read(stream, { from: lastRevision, maxCount: 1 })) {
      return { nextExpectedRevision: e.revision, position: e.position };
    }
    return { nextExpectedRevision: streamRevision(lastRevision), position: globalPosition(-1) };
  }
}

