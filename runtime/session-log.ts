import type { EventId } from '../domain/brand.js';
import { chainInputOf, GENESIS_HASH, type ChainHashFn } from '../domain/event-chain.js';
import { EventMetadataSchema, type EventMetadata } from '../domain/event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType, type EventDataByType, type EventType, type LogEvent, type SessionEvent } from '../domain/events.js';
import { fastEventData, isCommonMetadata } from '../domain/fast-event-data.js';
import { deepFreeze, snapshotJson } from '../domain/json.js';
import { sha256ChainHash } from './chain-hash.js';
import { stripSealed } from './content-sealer.js';
import type { NewEvent } from './ports/event-store.js';
import { checkedEvent } from './ports/checked-events.js';
import { ConcurrencyError, isConcurrencyError, isDuplicateEventIdError, isUnknownOutcomeError } from './ports/store-errors.js';
import { MessageTooLargeError, RuntimeError } from './errors.js';
import { eventSizeBytes, eventSizeOfJson } from './ports/store-validation.js';
import type { AppendOptions, CommitCheck, EventObserver, SessionLogOptions } from './session-log-types.js';

/**
 * The live, in-memory session log and its write-behind to the EventStore.
 * `append` is synchronous: validate and snapshot, run commit checks, push, publish to observers (contained); it
 * never waits for I/O. Batches go to the store in order with the expected revision this log last wrote; a
 * ConcurrencyError means another writer owns the stream: the log is fenced and refuses further appends.
 */
export class SessionLog {
  readonly #events: LogEvent[];
  /** What the store gets for each event appended here (sealed when there is a sealer); null for the initial events. */
  readonly #storedForm: (NewEvent | null)[];
  readonly #observers = new Set<EventObserver>();
  #observerList: EventObserver[] | null = null;
  readonly #checks = new Set<CommitCheck>();
  readonly #fenceListeners = new Set<(e: RuntimeError) => void>();
  readonly #opts: SessionLogOptions;
  #publishing = false;
  #fenced: RuntimeError | null = null;
  #closed = false;
  /** Index of the first event not yet durable. */
  #durable: number;
  #writing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #waiters: Waiter[] = [];
  #lastError: unknown = null;
  /** The chain hash of the last event (recomputed for events stored before the chain existed). */
  #head: string;
  readonly #hashOf: ChainHashFn;
  #peekedId: string | null = null;
  /** The largest event this log admits: the store's maximum, or the lower `maxEventBytes` option. */
  readonly maxEventBytes: number;
  /** The last append failed: what the store holds after `#durable` is not known until the tail is read. */
  #unsure = false;

  constructor(opts: SessionLogOptions) {
    this.#opts = opts;
    this.#events = [...(opts.initial ?? [])];
    this.#storedForm = this.#events.map(() => null);
    this.#durable = this.#events.length;
    this.#hashOf = opts.hashOf ?? sha256ChainHash;
    // a resumed log continues its chain; a log stored before the chain existed gets one from here on, whose first
    // link covers the unchained prefix as it is now
    let head = GENESIS_HASH;
    for (const e of this.#events) head = e.hash ?? this.#hashOf(chainInputOf(opts.stream, e, head));
    this.#head = head;
    this.maxEventBytes = Math.min(opts.store.maxEventBytes, opts.maxEventBytes ?? Number.POSITIVE_INFINITY);
  }

  get events(): readonly LogEvent[] {
    return this.#events;
  }
  get stream(): string {
    return this.#opts.stream;
  }
  /** Number of events known durable in the store. */
  get durableCount(): number {
    return this.#durable;
  }
  get fenced(): RuntimeError | null {
    return this.#fenced;
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
    this.#fenceListeners.add(listener);
    return () => this.#fenceListeners.delete(listener);
  }
  addCommitCheck(check: CommitCheck): () => void {
    this.#checks.add(check);
    return () => this.#checks.delete(check);
  }

  /** The chain hash of the last event (GENESIS_HASH for an empty log). */
  get head(): string {
    return this.#head;
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
    if (this.#fenced) throw this.#fenced;
    if (this.#closed) throw new RuntimeError('session-closed', `session ${this.stream} is closed`);
    // one read of every property: the copy is what is checked, measured and logged
    const copied = snapshotJson(data);
    if (!copied.ok) throw new RuntimeError('non-json-event', `${type}: data is ${copied.problem} at ${copied.path.replace(/^\$/, 'data')}`);
    // the live log never holds an event that a reader of the stored log would refuse
    // the common shapes are checked by hand on the copy, which is ours (fast-event-data.ts: a strict subset of what
    // the schema accepts, frozen in place); anything else goes through the schema, which names what is wrong
    if (isEventType(type) && fastEventData(type, copied.value, { inPlace: true }) === null) {
      const checked = EVENT_DATA_SCHEMAS[type].safeParse(copied.value);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        throw new RuntimeError('invalid-event', `${type}: ${issue.message} at ${['data', ...issue.path].join('.')}`);
      }
    } else if (!isEventType(type) && !options.ignorable) {
      throw new RuntimeError('invalid-event', `unknown event type "${type}" (only ignorable events of unknown types may be appended)`);
    }
    let metadata: EventMetadata | undefined;
    if (options.metadata !== undefined) {
      // one read of every property, as for the data
      const copiedMeta = snapshotJson(options.metadata);
      if (!copiedMeta.ok) throw new RuntimeError('non-json-event', `${type}: metadata is ${copiedMeta.problem} at ${copiedMeta.path.replace(/^\$/, 'metadata')}`);
      // the common metadata (only actor, correlationId and causationId, as strings) is checked by hand on the copy
      const checkedMeta = isCommonMetadata(copiedMeta.value) ? null : EventMetadataSchema.safeParse(copiedMeta.value);
      if (checkedMeta !== null && !checkedMeta.success) {
        const issue = checkedMeta.error.issues[0]!;
        throw new RuntimeError('invalid-event', `${type}: ${issue.message} at ${['metadata', ...issue.path].join('.')}`);
      }
      metadata = deepFreeze(copiedMeta.value) as EventMetadata;
    }
    // a `sealed` sidecar read from an erased log is dropped: only the sealer writes one, over what it encrypts
    const snapshot = deepFreeze(stripSealed(type, copied.value));
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
    const seq = this.#events.length;
    const ignorable = options.ignorable === true;
    // the chain covers the stored form (the ciphertext, when sealed): it verifies with no key, and after erasure
    // throws (before anything is logged) for what RFC 8785 cannot serialize, e.g. a lone surrogate
    const hash = this.#hashOf(
      chainInputOf(this.stream, { seq, id: id as EventId, time, type, data: stored, ...(ignorable ? { ignorable: true as const } : {}), ...(metadata !== undefined ? { metadata } : {}) }, this.#head),
    );
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
    this.#head = hash;
    this.#events.push(event);
    this.#storedForm.push(storedEvent);
    this.#schedule();
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
      upTo = this.#events.length;
    }
    if (this.#durable >= upTo) return Promise.resolve();
    if (this.#fenced) return Promise.reject(this.#fenced);
    const p = new Promise<void>((resolve, reject) => this.#waiters.push({ upTo, resolve, reject }));
    this.#drainNow();
    return p;
  }

  /**
   * Drops a log of which nothing was written yet (a session whose construction failed half-way, inside one
   * synchronous call): the pending write is cancelled and the log refuses further appends.
   */
  abandon(): void {
    if (this.#durable > 0 || this.#writing) throw new RuntimeError('session-closed', `session ${this.stream} was already written; it cannot be abandoned`);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#events.length = 0;
    this.#storedForm.length = 0;
    this.#closed = true;
  }

  /** Drains, then refuses further appends. */
  async close(): Promise<void> {
    try {
      await this.checkpoint();
    } finally {
      this.#closed = true;
    }
  }

  #signHead(): void {
    const signer = this.#opts.signer;
    const last = this.#events.at(-1);
    if (!signer || !last || last.type === 'chain/head' || this.#publishing || this.#fenced || this.#closed) return;
    const claim = { stream: this.stream, seq: last.seq, hash: this.#head };
    this.append('chain/head', { seq: claim.seq, hash: claim.hash, keyId: signer.keyId, signature: signer.sign(claim) });
  }

  #schedule(): void {
    if (this.#timer || this.#writing) return;
    const delay = this.#opts.writeBatchDelayMs ?? 200;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#drainNow();
    }, delay);
  }

  #drainNow(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#writing || this.#fenced) return;
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = null;
      // events that arrived during the last write, whose window already expired or that a checkpoint awaits
      if (this.#durable < this.#events.length && this.#waiters.some((w) => w.upTo > this.#durable)) this.#drainNow();
      else if (this.#durable < this.#events.length && !this.#lastError) this.#schedule();
    });
  }

  /**
   * Writes the queue in batches with the expected revision this log last wrote. After any failed append the
   * next attempt first reads the stream's tail, because a failure does not always mean "nothing was written":
   * - an unknown outcome (`UnknownOutcomeError`: a timeout after the request was sent, a dropped connection
   *   after COMMIT) is resolved at once: the tail says whether the batch is stored; if it is not, the batch is
   *   sent again, at most `IMMEDIATE_ATTEMPTS` times before the waiters are told and the next event or checkpoint
   *   tries again;
   * - a `ConcurrencyError` or `DuplicateEventIdError` may be this log's own earlier write (stored, acknowledgement
   *   lost, then a grown batch retried): if the tail holds only this log's events, they count as durable and the
   *   rest is written after them. Only an event this log did not write fences the session.
   * So a batch is stored exactly once and an unknown outcome never stalls the session or fences it by itself.
   */
  async #writeLoop(): Promise<void> {
    /** Consecutive sends of the batch at `#durable` that failed. */
    let attempts = 0;
    while (this.#durable < this.#events.length && !this.#fenced) {
      if (this.#unsure) {
        try {
          await this.#resolveFromTail(null);
        } catch (e) {
          this.#lastError = e;
          this.#opts.logger.warn(`reading the tail of ${this.stream} after a failed write failed; will retry at the next event or checkpoint`, e);
          this.#rejectWaiters(e);
          return;
        }
        continue;
      }
      const from = this.#durable;
      const batch = this.#storedForm.slice(from) as NewEvent[];
      const expected = from === 0 ? 'no_stream' : BigInt(from - 1);
      attempts++;
      try {
        // no event reaches the store before the key that opens it
        await this.#opts.sealer?.durable();
        await this.#opts.store.append(this.stream, batch, expected);
        this.#durable = from + batch.length;
        this.#lastError = null;
        attempts = 0;
        this.#settle();
      } catch (e) {
        this.#lastError = e;
        this.#unsure = true;
        const ownWriteSuspected = isConcurrencyError(e) || isDuplicateEventIdError(e);
        if (ownWriteSuspected || (isUnknownOutcomeError(e) && attempts < IMMEDIATE_ATTEMPTS)) {
          let advanced: boolean | null = null;
          try {
            advanced = await this.#resolveFromTail(isConcurrencyError(e) ? e : null);
          } catch (readError) {
            this.#opts.logger.warn(`reading the tail of ${this.stream} after a failed write failed`, readError);
          }
          if (this.#fenced) break;
          if (advanced === true) attempts = 0;
          // stored (in part or whole): write the rest; not stored after an unknown outcome: send it again
          if (advanced === true || (advanced === false && !ownWriteSuspected)) continue;
          // the stream holds nothing of this batch and the store still says another writer is there: fence
          if (advanced === false && isConcurrencyError(e)) {
            this.#fence(e);
            break;
          }
        }
        this.#opts.logger.warn(`write of ${batch.length} events to ${this.stream} failed; will retry at the next event or checkpoint`, e);
        this.#rejectWaiters(e);
        return;
      }
    }
    if (this.#fenced) this.#rejectWaiters(this.#fenced);
  }

  /**
   * Reads the stream from the first revision not known durable and compares ids with the live log: events of this
   * log found there become durable (returns true when any did). An event this log did not write fences the
   * session (with `conflict` as the cause when there is one). Clears the "unsure" state when it completes.
   */
  async #resolveFromTail(conflict: ConcurrencyError | null): Promise<boolean> {
    const from = this.#durable;
    let next = from;
    for await (const stored of this.#opts.store.read(this.stream, { from: BigInt(from) })) {
      const mine = this.#events[next];
      if (stored.revision !== BigInt(next) || mine === undefined || mine.id !== stored.id) {
        this.#fence(conflict ?? new ConcurrencyError(this.stream, from === 0 ? 'no_stream' : BigInt(from - 1), stored.revision));
        this.#unsure = false;
        return false;
      }
      next++;
    }
    this.#unsure = false;
    if (next === from) return false;
    this.#opts.logger.warn(`${next - from} events of ${this.stream} were stored by an append that reported failure; continuing after them`);
    this.#durable = next;
    this.#lastError = null;
    this.#settle();
    return true;
  }

  #fence(cause: unknown): void {
    this.#fenced = new RuntimeError('session-fenced', `another writer owns stream ${this.stream}; this session stopped writing`, { cause });
    this.#opts.logger.warn(this.#fenced.message, cause);
    for (const l of this.#fenceListeners) {
      try {
        l(this.#fenced);
      } catch (err) {
        this.#opts.logger.warn('fence listener threw (contained)', err);
      }
    }
  }

  #settle(): void {
    const keep: Waiter[] = [];
    for (const w of this.#waiters) (w.upTo <= this.#durable ? w.resolve() : keep.push(w));
    this.#waiters = keep;
  }
  #rejectWaiters(e: unknown): void {
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w.reject(e);
  }
}

/** How many times one write pass sends a batch whose outcome came back unknown before it tells the waiters. */
const IMMEDIATE_ATTEMPTS = 3;

interface Waiter {
  readonly upTo: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}
