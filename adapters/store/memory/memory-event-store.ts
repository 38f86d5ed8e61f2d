import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadAllPagesOptions,
  type ReadPagesOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeAllOptions,
  type SubscribeOptions,
  type SubscriptionMessage,
} from '../../../runtime/ports/event-store.js';
import { checkedForm } from '../../../runtime/ports/checked-events.js';
import { StoreClosedError, StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import type { StreamDeletion } from '../../../runtime/ports/stream-deletion.js';
import {
  assertValidBatch,
  assertValidExpected,
  assertValidStreamId,
  concurrencyError,
  DEFAULT_MAX_EVENT_BYTES,
  expectedRevisionMatches,
  idempotencyVerdict,
} from '../../../runtime/ports/store-validation.js';
import { deepFreeze } from '../../../domain/json.js';
import { DEFAULT_READ_PAGE_SIZE, pageSizeOf } from '../../../runtime/ports/paged-reads.js';
import { streamPartitionTest } from '../../../runtime/ports/stream-partition.js';
import { allSource, catchUpThenLive, streamSource } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';

/** Options of {@link MemoryEventStore}. */
export interface MemoryEventStoreOptions {
  /** Largest serialized event accepted. @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
}

interface StreamRecord {
  readonly events: RecordedEvent[];
  readonly revisionOfId: Map<string, bigint>;
}

/** The EventStore port in memory (with stream deletion): for tests, demos and the deterministic scripted runs. */
export class MemoryEventStore implements EventStore, StreamDeletion {
  /** The `db.system.name` telemetry gives this store's operations. */
  readonly dbSystem = 'steerlog.memory';
  readonly #streams = new Map<string, StreamRecord>();
  readonly #deleted = new Set<string>();
  readonly #all: RecordedEvent[] = [];
  readonly #notifier = new ChangeNotifier();
  readonly #maxEventBytes: number;
  #closed = false;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  }

  /** The largest event this store accepts (the `maxEventBytes` option). */
  get maxEventBytes(): number {
    return this.#maxEventBytes;
  }

  async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    assertValidStreamId(stream);
    assertValidExpected(expected);
    assertValidBatch(stream, events, this.#maxEventBytes);
    if (this.#deleted.has(stream)) throw new StreamDeletedError(stream);
    const record = this.#streams.get(stream);
    const verdict = idempotencyVerdict(stream, events, (id) => record?.revisionOfId.get(id));
    if (verdict.kind === 'already-appended') {
      const last = record!.events[Number(verdict.lastRevision)]!;
      return { nextExpectedRevision: last.revision, position: last.position };
    }
    const actual = this.#actual(record);
    if (!expectedRevisionMatches(expected, actual)) throw concurrencyError(stream, expected, actual);
    if (events.length === 0) {
      const last = record?.events.at(-1);
      return {
        nextExpectedRevision: (last?.revision ?? streamRevision(-1)) as StreamRevision,
        position: last?.position ?? globalPosition(-1),
      };
    }
    const target: StreamRecord = record ?? { events: [], revisionOfId: new Map() };
    if (!record) this.#streams.set(stream, target);
    let last: RecordedEvent | undefined;
    for (const e of events) {
      // an event the session log built and marked is deep-frozen already: kept as it is, not copied
      const shared = checkedForm(e) !== undefined;
      last = deepFreeze({
        stream,
        revision: streamRevision(target.events.length),
        position: globalPosition(this.#all.length),
        id: e.id,
        type: e.type,
        time: e.time,
        data: shared ? e.data : structuredClone(e.data),
        ...(e.ignorable ? { ignorable: true as const } : {}),
        ...(e.metadata !== undefined ? { metadata: shared ? e.metadata : structuredClone(e.metadata) } : {}),
        ...(e.hash !== undefined ? { hash: e.hash } : {}),
      });
      target.events.push(last);
      target.revisionOfId.set(e.id, last.revision);
      this.#all.push(last);
    }
    this.#notifier.notify();
    return { nextExpectedRevision: last!.revision, position: last!.position };
  }

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    assertValidStreamId(stream);
    const events = this.#streams.get(stream)?.events ?? [];
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    let count = 0;
    if ((options.direction ?? 'forwards') === 'forwards') {
      for (let i = Math.max(0, Number(options.from ?? 0n)); i < events.length && count < max; i++, count++) yield events[i]!;
    } else {
      const start = options.from === undefined ? events.length - 1 : Math.min(Number(options.from), events.length - 1);
      for (let i = start; i >= 0 && count < max; i--, count++) yield events[i]!;
    }
  }

  /** `read` a page at a time (slices of the stream's events, `DEFAULT_READ_PAGE_SIZE` by default). */
  async *readPages(stream: string, options: ReadPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    this.#assertOpen();
    assertValidStreamId(stream);
    const events = this.#streams.get(stream)?.events ?? [];
    const size = pageSizeOf(options, DEFAULT_READ_PAGE_SIZE);
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    if ((options.direction ?? 'forwards') === 'forwards') {
      // the end is taken at each page: events appended meanwhile are read, as `read` reads them
      for (let i = Math.max(0, Number(options.from ?? 0n)); i < events.length && remaining > 0; ) {
        const page = events.slice(i, i + Math.min(size, remaining));
        i += page.length;
        remaining -= page.length;
        yield page;
      }
    } else {
      for (let i = options.from === undefined ? events.length - 1 : Math.min(Number(options.from), events.length - 1); i >= 0 && remaining > 0; ) {
        const n = Math.min(size, remaining, i + 1);
        const page = events.slice(i - n + 1, i + 1).reverse();
        i -= n;
        remaining -= n;
        yield page;
      }
    }
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    assertValidStreamId(stream);
    return catchUpThenLive(streamSource(this, stream, options.from), this.#notifier, null, options.signal);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    for await (const page of this.readAllPages(options)) yield* page;
  }

  /** `readAll` a page at a time (the global order without deleted streams, `DEFAULT_READ_PAGE_SIZE` by default; `partition` filters). */
  async *readAllPages(options: ReadAllPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    this.#assertOpen();
    const size = pageSizeOf(options, DEFAULT_READ_PAGE_SIZE);
    let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
    const kept = streamPartitionTest(options.partition);
    // the end is taken at each page: events appended meanwhile are read
    for (let i = options.after === undefined ? 0 : Math.max(0, Number(options.after) + 1); i < this.#all.length && remaining > 0; ) {
      const page: RecordedEvent[] = [];
      for (; i < this.#all.length && page.length < size && page.length < remaining; i++) {
        const e = this.#all[i]!;
        if (!this.#deleted.has(e.stream) && kept(e.stream)) page.push(e);
      }
      if (page.length === 0) continue;
      remaining -= page.length;
      yield page;
    }
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
    return catchUpThenLive(allSource(this, options.partition), this.#notifier, options.after ?? null, options.signal);
  }

  async revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    this.#assertOpen();
    assertValidStreamId(stream);
    return this.#actual(this.#streams.get(stream));
  }

  /** Deletes a whole stream if its last revision is `expected`; its id is retired (see StreamDeletion). */
  async deleteStream(stream: string, expected: StreamRevision): Promise<void> {
    this.#assertOpen();
    assertValidStreamId(stream);
    if (this.#deleted.has(stream)) throw new StreamDeletedError(stream);
    const actual = this.#actual(this.#streams.get(stream));
    if (actual !== expected) throw concurrencyError(stream, expected, actual);
    this.#streams.delete(stream);
    this.#deleted.add(stream);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#notifier.close();
  }

  #actual(record: StreamRecord | undefined): StreamRevision | 'no_stream' {
    const last = record?.events.at(-1);
    return last ? last.revision : 'no_stream';
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}
