import type { EventId } from '../domain/brand.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { EventDataByType, EventType, LogEvent, SessionEvent } from '../domain/events.js';
import { deepFreeze } from '../domain/json.js';
import { admitEvent } from './event-admission.js';
import { checkedEvent, checkedForm } from './ports/checked-events.js';
import { MessageTooLargeError, RuntimeError } from './errors.js';
import { eventSizeBytes, eventSizeOfJson } from './ports/store-validation.js';
import type { AppendOptions, CommitCheck, EventObserver, SessionLogOptions } from './session-log-types.js';
import { SessionChain } from './session-chain.js';
import { WriteBehind } from './write-behind.js';

/**
 * The live, in-memory session log and its write-behind to the EventStore (`write-behind.ts`); each appended event is
 * checked (`event-admission.ts`) and chained (`session-chain.ts`).
 * `append` is synchronous: validate and snapshot, run commit checks, push, publish to observers (contained); it
 * never waits for I/O. Batches go to the store in order with the expected revision this log last wrote; a
 * ConcurrencyError means another writer owns the stream: the log is fenced and refuses further appends.
 */
export class SessionLog {
  /** The events held in memory: the log from `#base` on. */
  readonly #events: LogEvent[];
  /** The seq of `#events[0]` (0 unless the log was resumed from a fold snapshot). */
  readonly #base: number;
  readonly #observers = new Set<EventObserver>();
  #observerList: EventObserver[] | null = null;
  readonly #checks = new Set<CommitCheck>();
  readonly #opts: SessionLogOptions;
  #publishing = false;
  #closed = false;
  readonly #writes: WriteBehind;
  readonly #chain: SessionChain;
  #peekedId: string | null = null;
  /** The largest event this log admits: the store's maximum, or the lower `maxEventBytes` option. */
  readonly maxEventBytes: number;

  constructor(opts: SessionLogOptions) {
    this.#opts = opts;
    this.#events = [...(opts.initial ?? [])];
    this.#base = opts.initialBase ?? 0;
    if (this.#base > 0 && opts.initialHead === undefined) throw new RuntimeError('invalid-argument', 'a session log that starts at a seq above 0 needs the stored head (initialHead)');
    this.#writes = new WriteBehind(opts, this.#events, this.#base);
    this.#chain = new SessionChain(opts, this.#events, this.#base > 0 ? opts.initialHead : undefined);
    this.maxEventBytes = Math.min(opts.store.maxEventBytes, opts.maxEventBytes ?? Number.POSITIVE_INFINITY);
  }

  /**
   * The events held in memory, in order: the whole log, or (a log resumed from a fold snapshot) the log from
   * {@link base} on. `events[i].seq === base + i`.
   */
  get events(): readonly LogEvent[] {
    return this.#events;
  }
  /** The seq of `events[0]`: 0, or above for a log resumed from a fold snapshot (the events before are durable). */
  get base(): number {
    return this.#base;
  }
  /** The number of events of the log (the next seq), held or not. */
  get length(): number {
    return this.#base + this.#events.length;
  }
  /** The event at `seq` when it is held in memory, else undefined. */
  eventAt(seq: number): LogEvent | undefined {
    return seq >= this.#base ? this.#events[seq - this.#base] : undefined;
  }
  /**
   * `JSON.stringify(event.data)` of the event at `seq` when this log made it already — an event it appended itself,
   * without a sealer (the string the store writes), not yet durable — else undefined. What an observer that serializes
   * events (the telemetry's hand-over to its export worker, as each event is appended) reuses instead of serializing
   * the data again. The string is dropped once the event is durable.
   */
  dataJsonOf(seq: number): string | undefined {
    if (this.#opts.sealer) return undefined;
    const stored = this.#writes.storedAt(seq);
    return stored === undefined ? undefined : checkedForm(stored)?.dataJson;
  }
  get stream(): string {
    return this.#opts.stream;
  }
  /** Number of events known durable in the store. */
  get durableCount(): number {
    return this.#writes.durableCount;
  }
  get fenced(): RuntimeError | null {
    return this.#writes.fenced;
  }

  onEvent(observer: EventObserver): () => void {
    this.#observers.add(observer);
    this.#observerList = null;
    return () => {
      this.#observerList = null;
      return this.#observers.delete(observer);
    };
  }
  /** Called once if another writer takes the stream (the session stops writing). */
  onFence(listener: (e: RuntimeError) => void): () => void {
    return this.#writes.onFence(listener);
  }
  addCommitCheck(check: CommitCheck): () => void {
    this.#checks.add(check);
    return () => this.#checks.delete(check);
  }

  /** The chain hash of the last event (GENESIS_HASH for an empty log). */
  get head(): string {
    return this.#chain.head;
  }

  /** Appends one event, chained to the previous one. */
  append<T extends EventType>(type: T, data: EventDataByType[T], options: AppendOptions = {}): Extract<SessionEvent, { type: T }> {
    return this.appendAny(type, data, options) as Extract<SessionEvent, { type: T }>;
  }

  /** Appends an event of any type (a fork's seed copies events it may not know, keeping `ignorable`). */
  appendAny(type: string, data: unknown, options: AppendOptions & { readonly ignorable?: true } = {}): LogEvent {
    if (this.#publishing) {
      throw new RuntimeError('reentrant-append', `session append cannot reenter while an event is being published (${type})`);
    }
    if (this.#writes.fenced) throw this.#writes.fenced;
    if (this.#closed) throw new RuntimeError('session-closed', `session ${this.stream} is closed`);
    const { data: snapshot, metadata } = admitEvent(type, data, options);
    const sealer = this.#opts.sealer;
    const time = options.time ?? this.#opts.clock.now();
    // throws (before anything is logged) for what RFC 8785 cannot serialize
    const stored = sealer ? deepFreeze(sealer.seal(type, snapshot, metadata, time)) : snapshot;
    // nor one the store would refuse as too large: measured as the store measures it, with the id it will carry
    const id = this.#nextId();
    // serialized once: measured here, and the store writes these very bytes (checked-events.ts)
    const dataJson = JSON.stringify(stored);
    const size = eventSizeOfJson(dataJson, { id, type, ...(metadata !== undefined ? { metadata } : {}) });
    if (size > this.maxEventBytes) throw new MessageTooLargeError(type, size, this.maxEventBytes);
    for (const check of this.#checks) check(type, snapshot);
    const seq = this.#base + this.#events.length;
    const ignorable = options.ignorable === true;
    // the chain covers the stored form (the ciphertext, when sealed): it verifies with no key, and after erasure
    // throws (before anything is logged) for what RFC 8785 cannot serialize, e.g. a lone surrogate
    const hash = this.#chain.nextHash({ seq, id: id as EventId, time, type, data: stored, ...(ignorable ? { ignorable: true as const } : {}), ...(metadata !== undefined ? { metadata } : {}) });
    // data and metadata are deep-frozen already: freezing the envelope freezes the whole event
    const event = Object.freeze({
      seq,
      id: id as EventId,
      time,
      type,
      data: snapshot,
      ...(ignorable ? { ignorable: true as const } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      hash,
    }) as unknown as LogEvent;
    const storedEvent = checkedEvent(
      { id, type, time, data: stored, ...(ignorable ? { ignorable: true as const } : {}), ...(metadata !== undefined ? { metadata } : {}), hash },
      { size, dataJson },
    );
    this.#peekedId = null;
    this.#chain.advance(hash);
    this.#events.push(event);
    this.#writes.enqueue(storedEvent);
    this.#publishing = true;
    try {
      // the observers as they were when publishing began (one array, rebuilt only when they change)
      this.#observerList ??= [...this.#observers];
      for (const observer of this.#observerList) {
        try {
          observer(event);
        } catch (e) {
          this.#opts.logger.warn(`session/event observer threw on ${type} (contained)`, e);
        }
      }
    } finally {
      this.#publishing = false;
    }
    return event;
  }

  /**
   * The size the next appended event of this type and data would have, measured as the store measures it
   * (`eventSizeBytes`, with the id the event will carry and its metadata). An append fails with `message-too-large`
   * above `maxEventBytes`. Assumes `data` and `metadata` are lossless JSON.
   */
  measure(type: string, data: unknown, metadata?: EventMetadata): number {
    const stored = this.#opts.sealer ? this.#opts.sealer.seal(type, data, metadata, null) : data;
    return eventSizeBytes({ id: this.#nextId(), type, data: stored, ...(metadata !== undefined ? { metadata } : {}) });
  }

  /** The id the next appended event gets: drawn once, kept until an event takes it (a refused append wastes none). */
  #nextId(): string {
    this.#peekedId ??= this.#opts.ids.next();
    return this.#peekedId;
  }

  /**
   * Resolves when every event appended so far is durable; rejects if the write fails or the stream is fenced.
   * A full checkpoint (no `upTo`) with a signer first appends a signed `chain/head` for the last event, unless that
   * event already is one.
   */
  checkpoint(upTo?: number): Promise<void> {
    if (upTo === undefined) {
      this.#signHead();
      upTo = this.length;
    }
    return this.#writes.checkpoint(upTo);
  }

  /**
   * Drops a log of which nothing was written yet (a session whose construction failed half-way, inside one
   * synchronous call): the pending write is cancelled and the log refuses further appends.
   */
  abandon(): void {
    this.#writes.abandon();
    this.#events.length = 0;
    this.#closed = true;
  }

  /**
   * Drains, then refuses further appends. Events appended while it drains (an observer's, or a child's run ending in
   * a parent being disposed) are drained too: it resolves once every event appended before it completes is durable.
   */
  async close(): Promise<void> {
    try {
      do await this.checkpoint();
      while (this.#writes.durableCount < this.length);
    } finally {
      this.#closed = true;
    }
  }

  /** Appends a signed `chain/head` for the last event, when there is a signer and the log may append. */
  #signHead(): void {
    if (this.#publishing || this.#writes.fenced || this.#closed) return;
    const signed = this.#chain.signedHead(this.#events.at(-1));
    if (signed) this.append('chain/head', signed);
  }
}
