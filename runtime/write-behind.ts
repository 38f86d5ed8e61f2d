import { preciseNow } from './ports/store-operations.js';
import type { LogEvent } from '../domain/events.js';
import type { NewEvent } from './ports/event-store.js';
import { ConcurrencyError, isConcurrencyError, isDuplicateEventIdError, isUnknownOutcomeError } from './ports/store-errors.js';
import { RuntimeError } from './errors.js';
import type { SessionLogOptions } from './session-log-types.js';

/** What the write-behind reads of its session log's options: the store and stream, the logger, the sealer and the window. */
export type WriteBehindOptions = Pick<SessionLogOptions, 'store' | 'stream' | 'logger' | 'sealer' | 'writeBatchDelayMs' | 'writeGate' | 'onAppend'>;

/**
 * A session log's write-behind to the EventStore: the stored form of every event the log appends, written in order in
 * batches with the expected revision last written, the checkpoints waiting for them, and the fence. It reads the live
 * log's events (which only the session log appends to) to know what is pending and which ids are its own.
 */
export class WriteBehind {
  readonly #opts: WriteBehindOptions;
  readonly #events: readonly LogEvent[];
  /** The seq of `#events[0]` (the live log may not hold the stream from its start). */
  readonly #base: number;
  /**
   * What the store gets for each event appended here and not yet known durable (sealed when there is a sealer):
   * `#pending[i]` is the event at seq `#durable + i`. A stored form is dropped once its event is durable: the live log
   * keeps the event, and the stored form (its serialized data beside it) would otherwise stay in memory for as long
   * as the session, for every event, to be traced and copied by every collection.
   */
  #pending: NewEvent[] = [];
  readonly #fenceListeners = new Set<(e: RuntimeError) => void>();
  #fenced: RuntimeError | null = null;
  /** Seq of the first event not yet durable. */
  #durable: number;
  #writing: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** The window expired and the write waits for its slice of the loop (`writeGate`): scheduled, as with `#timer`. */
  #gated = false;
  #waiters: Waiter[] = [];
  #lastError: unknown = null;
  /** The last append failed: what the store holds after `#durable` is not known until the tail is read. */
  #unsure = false;

  /**
   * `events`: the live log, as the session log holds it (its initial events are durable already), from seq `base`
   * on (the events before it are durable too).
   */
  constructor(opts: WriteBehindOptions, events: readonly LogEvent[], base = 0) {
    this.#opts = opts;
    this.#events = events;
    this.#base = base;
    this.#durable = base + events.length;
  }

  /** The seq after the last event of the live log. */
  #end(): number {
    return this.#base + this.#events.length;
  }

  get stream(): string {
    return this.#opts.stream;
  }
  /** Number of events known durable in the store. */
  get durableCount(): number {
    return this.#durable;
  }
  /** Why the log stopped writing: another writer owns the stream (null while it does not). */
  get fenced(): RuntimeError | null {
    return this.#fenced;
  }

  /** Called once if another writer takes the stream (the session stops writing). */
  onFence(listener: (e: RuntimeError) => void): () => void {
    this.#fenceListeners.add(listener);
    return () => this.#fenceListeners.delete(listener);
  }

  /**
   * What the store gets for the event at `seq` appended here while it is not yet durable (an observer of the append
   * reads it then); undefined for an initial event, one not held, or one durable already.
   */
  storedAt(seq: number): NewEvent | undefined {
    return seq >= this.#durable ? this.#pending[seq - this.#durable] : undefined;
  }

  /** Queues what the store gets for the event just pushed to the live log; the first into an idle queue arms the window. */
  enqueue(stored: NewEvent): void {
    this.#pending.push(stored);
    this.#schedule();
  }

  /** Resolves when the first `upTo` events are durable; rejects if the write fails or the stream is fenced. */
  checkpoint(upTo: number): Promise<void> {
    if (this.#durable >= upTo) return Promise.resolve();
    if (this.#fenced) return Promise.reject(this.#fenced);
    const p = new Promise<void>((resolve, reject) => this.#waiters.push({ upTo, resolve, reject }));
    this.#drainNow();
    return p;
  }

  /** Cancels the pending write of a log of which nothing was written yet and drops its stored forms; throws otherwise. */
  abandon(): void {
    if (this.#durable > 0 || this.#writing) throw new RuntimeError('session-closed', `session ${this.stream} was already written; it cannot be abandoned`);
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#gated = false;
    this.#pending.length = 0;
  }

  #schedule(): void {
    if (this.#timer || this.#gated || this.#writing) return;
    const delay = this.#opts.writeBatchDelayMs ?? 200;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const gate = this.#opts.writeGate;
      if (!gate) return this.#drainNow();
      // the window expired: write once the gate gives this log its slice (a checkpoint meanwhile drains at once)
      this.#gated = true;
      gate.next().then(
        () => {
          if (!this.#gated) return; // abandoned, or a checkpoint drained it meanwhile
          this.#gated = false;
          this.#drainNow();
        },
        (e: unknown) => {
          this.#gated = false;
          this.#opts.logger.warn('the write gate failed; writing at once', e);
          this.#drainNow();
        },
      );
    }, delay);
  }

  #drainNow(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    this.#gated = false;
    if (this.#writing || this.#fenced) return;
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = null;
      // events that arrived during the last write, whose window already expired or that a checkpoint awaits
      if (this.#durable < this.#end() && this.#waiters.some((w) => w.upTo > this.#durable)) this.#drainNow();
      else if (this.#durable < this.#end() && !this.#lastError) this.#schedule();
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
  /** Tells `onAppend` of one append (contained: a throwing observer is logged). */
  #timed(firstSeq: number, events: number, startTime: number, error: unknown): void {
    const onAppend = this.#opts.onAppend;
    if (!onAppend) return;
    try {
      onAppend({ stream: this.stream, firstSeq, events, startTime, endTime: preciseNow(), ...(error !== undefined ? { error } : {}) });
    } catch (e) {
      this.#opts.logger.warn('an append observer failed (contained)', e);
    }
  }

  async #writeLoop(): Promise<void> {
    /** Consecutive sends of the batch at `#durable` that failed. */
    let attempts = 0;
    while (this.#durable < this.#end() && !this.#fenced) {
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
      const batch = this.#pending.slice(0);
      const expected = from === 0 ? 'no_stream' : BigInt(from - 1);
      attempts++;
      try {
        // no event reaches the store before the key that opens it
        await this.#opts.sealer?.durable();
        const started = this.#opts.onAppend ? preciseNow() : 0;
        try {
          await this.#opts.store.append(this.stream, batch, expected);
        } catch (e) {
          this.#timed(from, batch.length, started, e);
          throw e;
        }
        this.#timed(from, batch.length, started, undefined);
        this.#advanceDurable(from + batch.length);
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
      const mine = this.#events[next - this.#base];
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
    this.#advanceDurable(next);
    this.#lastError = null;
    this.#settle();
    return true;
  }

  /** The events before `seq` are durable: their stored forms are dropped. */
  #advanceDurable(seq: number): void {
    this.#pending.splice(0, seq - this.#durable);
    this.#durable = seq;
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
