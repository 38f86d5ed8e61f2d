import * as E from 'fp-ts/lib/Either.js';
import { isKnownEvent } from '../../domain/events.js';
import { findNonJsonPath } from '../../domain/json.js';
import type { EventStore, RecordedEvent } from '../../runtime/ports/event-store.js';
import { subscribeAllPages } from '../../runtime/ports/paged-reads.js';
import { partitionCache } from '../../runtime/ports/stream-partition.js';
import { isProjectionFailedError, isProjectionFencedError, ProjectionFailedError, ProjectionStateNotJsonError } from '../errors.js';
import { toLogEvent } from '../sources/from-store.js';
import { applyProjectionEvent } from '../custom/apply-event.js';
import type { Projection, ProjectionEvent } from '../custom/define-projection.js';
import { finalPolicy, retryDelays, type FailurePolicy } from './failure-policy.js';
import { isKeyedProjection, isTableProjection, type AnyProjection, type TableNames, type TableProjection } from './kinds.js';
import type { ParkedEvent, PartitionCommit, PartitionKey, PartitionsWrite, ProjectionLease, ProjectionStore } from './projection-store.js';
import { readAhead } from './read-ahead.js';

/** Options of {@link startProjectionWorker}. */
export interface ProjectionWorkerOptions<Tx> {
  /** The event store to read (every stream, in global order). */
  readonly store: EventStore;
  /** Where leases, checkpoints, documents and parked events are kept. */
  readonly projections: ProjectionStore<Tx>;
  /** This worker's id, unique among the workers sharing `projections` (e.g. host:pid:random). */
  readonly owner: string;
  /** How many partitions the streams are spread over (fixed for a projection version). @defaultValue 1 */
  readonly partitions?: number;
  /** How long a lease lasts without renewal, ms; renewed every third of it. @defaultValue 10_000 */
  readonly leaseMs?: number;
  /**
   * How often the worker says it is alive and looks at the live workers, ms: a worker holding more than its fair share
   * (a worker joined) commits its batch and gives the surplus back at the next check, and a worker holding less (it
   * joined, or partitions were given back) takes free partitions at its next check, so a joining worker gets its
   * share within about two checks instead of waiting for lease renewals. Each check is one heartbeat (PostgreSQL:
   * two statements); a worker under its share also tries the partitions it lacks. @defaultValue min(500, leaseMs / 3)
   */
  readonly rebalanceMs?: number;
  /**
   * Commit once this many events were read since the last commit: the most events one transaction holds. A commit
   * runs while the reader goes on with the next batch (at most one commit in flight; the partitions held commit side
   * by side, each in its own transaction). @defaultValue 5000
   */
  readonly batchSize?: number;
  /**
   * While catching up, commit at least this often (a batch that did not reach `batchSize` in this time is committed
   * as it is), so that progress shows and a crash loses little work. @defaultValue 1000
   */
  readonly maxBatchMs?: number;
  /** Once caught up (the live tail), commit at most this long after the oldest uncommitted event. @defaultValue 250 */
  readonly flushIntervalMs?: number;
  /** Keep following live events after catching up; false stops at the head (a one-shot fold). @defaultValue true */
  readonly follow?: boolean;
  /** What to do with an event that cannot be applied. @defaultValue 'stop' */
  readonly failure?: FailurePolicy;
  /** Most events a stored page holds. @defaultValue the store's own page */
  readonly pageSize?: number;
  /** Waits (retry backoff and idle polls go through it). @defaultValue setTimeout */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told after each commit that landed (for progress displays and tests). */
  readonly onCommit?: (partition: number, position: bigint) => void;
  /** Told when the worker loses a partition: its renewal was refused, or a commit was fenced (and rolled back). */
  readonly onLost?: (partition: number, reason: 'renewal-refused' | 'fenced' | 'commit-failed') => void;
}

/** A running worker, as {@link startProjectionWorker} returns it. */
export interface ProjectionWorker {
  readonly owner: string;
  /** The partitions this worker holds now. */
  owned(): readonly number[];
  /** Resolves the first time every partition it holds is caught up and committed; rejects if the worker ends first. */
  readonly caughtUp: Promise<void>;
  /** Resolves when the worker stopped (or, without `follow`, reached the head); rejects with the reason it failed. */
  readonly done: Promise<void>;
  /**
   * The in-memory states of the partitions it holds, by key (a keyed projection: by stream; a single-state
   * projection: one, under `''`; a table projection: none); once it ended, those of the partitions it held last.
   */
  states(): ReadonlyMap<string, unknown>;
  /** Finishes the batch being read, commits it, releases the leases and resolves when done (never rejects: see `done`). */
  stop(): Promise<void>;
  /** Ends WITHOUT committing or releasing (a simulated crash): the leases run out on their own. */
  abandon(): void;
}

/** A partition held by the worker. */
interface Part {
  readonly lease: ProjectionLease;
  /** Where the current read starts for it (its committed checkpoint then): events at or before it are not routed to it. */
  start: bigint | null;
  committed: bigint | null;
  /** Keyed documents (parsed), by key. */
  readonly docs: Map<string, unknown>;
  /** The committed JSON text of each document. */
  readonly written: Map<string, string>;
  readonly dirty: Set<string>;
  /** The events routed since the last commit (table projections apply them at commit; folds re-derive from them). */
  events: ProjectionEvent[];
  parked: ParkedEvent[];
  applied: number;
}

/**
 * How long a worker over several partitions lets pass between saying it is alive and taking its share, ms (at most
 * the rebalance check; its tables are made meanwhile): workers started together see each other before they take
 * partitions. A worker alone pays it once, when it starts.
 */
const JOIN_WINDOW_MS = 150;

/** A partition's commit, prepared: what the store gets, and the events a table projection's handler applies. */
interface Prepared {
  readonly partition: number;
  readonly part: Part;
  readonly events: ProjectionEvent[];
  readonly commit: Omit<PartitionCommit<never>, 'write'>;
}

class HandlerFailure extends Error {
  constructor(readonly event: ProjectionEvent | null, override readonly cause: unknown) {
    super('handler failed');
  }
}

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

const quiet = <T>(p: Promise<T>): Promise<T> => {
  p.catch(() => undefined);
  return p;
};

/** The events of several partitions (each in the read's order) merged into the read's order: global position. */
const inReadOrder = (lists: readonly (readonly ProjectionEvent[])[]): ProjectionEvent[] => {
  const merged: ProjectionEvent[] = [];
  const next = lists.map(() => 0);
  for (;;) {
    let pick = -1;
    for (let i = 0; i < lists.length; i++) {
      const e = lists[i]![next[i]!];
      if (e !== undefined && (pick < 0 || e.position < lists[pick]![next[pick]!]!.position)) pick = i;
    }
    if (pick < 0) return merged;
    merged.push(lists[pick]![next[pick]!++]!);
  }
};

const oneLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').slice(0, 2000);

class Worker<Tx> implements ProjectionWorker {
  readonly owner: string;
  readonly caughtUp: Promise<void>;
  readonly done: Promise<void>;
  readonly #projection: AnyProjection<Tx>;
  readonly #o: ProjectionWorkerOptions<Tx>;
  readonly #n: number;
  /** The partition of a stream (remembered per stream: every event is routed by it). */
  readonly #partitionOf: (stream: string) => number;
  readonly #leaseMs: number;
  readonly #rebalanceMs: number;
  /** When the leases were last renewed (they are renewed every third of the lease, at a check). */
  #renewedAt = 0;
  readonly #batchSize: number;
  readonly #flushMs: number;
  readonly #maxBatchMs: number;
  /** The current read reached the head once (the live tail): the flush interval applies, not `maxBatchMs`. */
  #tailing = false;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #parts = new Map<number, Part>();
  /** Leases taken by the ticker, loaded into `#parts` when the reader restarts. */
  readonly #taken: ProjectionLease[] = [];
  readonly #stop = new AbortController();
  #reader: AbortController | null = null;
  #tables: TableNames = {};
  #readerPosition: bigint | null = null;
  #sinceCommit = 0;
  #flushTimer: ReturnType<typeof setTimeout> | null = null;
  #commitChain: Promise<void> = Promise.resolve();
  #abandoned = false;
  #failure: unknown = null;
  #live: readonly string[] = [];
  #ticking = false;
  #tickRun: Promise<void> = Promise.resolve();
  /** The states of the partitions released at the end (what `states()` shows once the worker stopped). */
  #released = new Map<string, unknown>();
  #resolveCaughtUp!: () => void;
  #rejectCaughtUp!: (e: unknown) => void;

  constructor(projection: AnyProjection<Tx>, options: ProjectionWorkerOptions<Tx>) {
    this.#projection = projection;
    this.#o = options;
    this.owner = options.owner;
    this.#n = Math.max(1, Math.floor(options.partitions ?? 1));
    this.#partitionOf = partitionCache(this.#n);
    this.#leaseMs = Math.max(300, options.leaseMs ?? 10_000);
    this.#rebalanceMs = Math.max(10, Math.min(this.#tickMs, options.rebalanceMs ?? 500));
    this.#batchSize = Math.max(1, options.batchSize ?? 5000);
    this.#flushMs = Math.max(0, options.flushIntervalMs ?? 250);
    this.#maxBatchMs = Math.max(0, options.maxBatchMs ?? 1000);
    this.#sleep = options.sleep ?? defaultSleep;
    if (this.#n > 1 && !isKeyedProjection(projection) && !isTableProjection(projection)) {
      throw new TypeError(`projection "${projection.name}": a single-state projection runs in one partition; make it keyed (defineKeyedProjection) or a table projection to partition it`);
    }
    if (isTableProjection(projection) && !options.projections.supportsTables) {
      throw new TypeError(`projection "${projection.name}": a table projection needs a projection store with transactions (PostgreSQL)`);
    }
    this.caughtUp = quiet(
      new Promise<void>((resolve, reject) => {
        this.#resolveCaughtUp = resolve;
        this.#rejectCaughtUp = reject;
      }),
    );
    this.done = quiet(this.#main());
    this.done.then(
      () => this.#rejectCaughtUp(new Error('the projection worker ended before it caught up')),
      (e: unknown) => this.#rejectCaughtUp(e),
    );
  }

  owned(): readonly number[] {
    return [...this.#parts.keys()].sort((a, b) => a - b);
  }

  states(): ReadonlyMap<string, unknown> {
    const all = new Map<string, unknown>(this.#released);
    for (const part of this.#parts.values()) for (const [k, v] of part.docs) all.set(k, v);
    return all;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#reader?.abort();
    await this.done.catch(() => undefined);
  }

  abandon(): void {
    this.#abandoned = true;
    this.#stop.abort();
    this.#reader?.abort();
  }

  #key(partition: number): PartitionKey {
    return { name: this.#projection.name, version: this.#projection.version, partition, partitions: this.#n };
  }

  async #main(): Promise<void> {
    const follow = this.#o.follow ?? true;
    try {
      // over several partitions: say this worker is alive, then (its tables made) give the workers started with it a
      // moment to say so too, so that workers started together each take their share at once instead of one taking
      // every partition and handing most of them back
      if (this.#n > 1) this.#live = await this.#o.projections.heartbeat(this.#projection.name, this.#projection.version, this.owner, this.#leaseMs);
      const joinedAt = Date.now();
      if (isTableProjection(this.#projection)) {
        this.#tables = await this.#o.projections.migrate(this.#projection.name, this.#projection.version, this.#projection.tables);
      }
      const window = Math.min(JOIN_WINDOW_MS, this.#rebalanceMs) - (Date.now() - joinedAt);
      if (this.#n > 1 && window > 0) await this.#sleep(window, this.#stop.signal);
      while (!this.#stop.signal.aborted) {
        await this.#balance();
        await this.#loadTaken();
        if (this.#stop.signal.aborted) break;
        if (this.#parts.size === 0) {
          if (!follow) throw new Error(`projection "${this.#projection.name}"@${this.#projection.version}: every partition is held by another worker`);
          // nothing held (every partition taken, e.g. a worker joining): look again at the next check
          await this.#sleep(this.#rebalanceMs, this.#stop.signal);
          continue;
        }
        const reader = new AbortController();
        this.#reader = reader;
        // a failed renewal or heartbeat (the database unreachable) is tried again at the next tick: the leases run
        // out on their own meanwhile, and the epoch fences every commit
        this.#renewedAt = Date.now();
        const ticker = setInterval(() => {
          // a tick still running (a slow store) is the one to wait for: it may take a lease that must be released
          if (this.#ticking) return;
          this.#tickRun = this.#tick(reader).catch(() => undefined);
        }, this.#rebalanceMs);
        let finished = false;
        try {
          finished = await this.#read(reader.signal, follow);
        } finally {
          clearInterval(ticker);
          await this.#tickRun; // a renewal or take in flight lands before the leases are counted
          this.#reader = null;
        }
        if (this.#failure !== null) throw this.#failure;
        if (this.#abandoned) return;
        await this.#commitAll();
        if (finished) break;
      }
      if (this.#abandoned) return;
      await this.#commitAll();
      if (this.#failure !== null) throw this.#failure;
    } catch (e) {
      if (this.#abandoned) return;
      this.#clearFlush();
      await this.#releaseAll().catch(() => undefined);
      throw e;
    }
    this.#clearFlush();
    if (this.#abandoned) return;
    await this.#releaseAll();
  }

  get #tickMs(): number {
    return Math.max(100, Math.floor(this.#leaseMs / 3));
  }

  async #releaseAll(): Promise<void> {
    const leases = [...this.#parts.values()].map((p) => p.lease).concat(this.#taken.splice(0));
    this.#released = new Map(this.states());
    this.#parts.clear();
    for (const lease of leases) await this.#o.projections.release(lease).catch(() => undefined);
    await this.#o.projections.leave(this.#projection.name, this.#projection.version, this.owner).catch(() => undefined);
  }

  /** This worker's fair share of the partitions among the live workers (sorted ids: the first ones take one more). */
  #share(): number {
    const k = Math.max(1, this.#live.length);
    const index = Math.max(0, this.#live.indexOf(this.owner));
    return Math.floor(this.#n / k) + (index < this.#n % k ? 1 : 0);
  }

  /** Between reads: heartbeat, give back partitions beyond the share (committed first), take free ones up to it. */
  async #balance(): Promise<void> {
    const { projections } = this.#o;
    this.#live = await projections.heartbeat(this.#projection.name, this.#projection.version, this.owner, this.#leaseMs);
    const share = this.#share();
    const held = this.owned();
    for (const partition of held.slice(share).reverse()) {
      const part = this.#parts.get(partition)!;
      this.#parts.delete(partition);
      await projections.release(part.lease);
    }
    await this.#acquireUpTo(share);
  }

  async #acquireUpTo(share: number): Promise<boolean> {
    let took = false;
    const holding = (): number => this.#parts.size + this.#taken.length;
    const index = Math.max(0, this.#live.indexOf(this.owner));
    for (let i = 0; i < this.#n && holding() < share; i++) {
      const partition = (index * Math.max(1, Math.floor(this.#n / Math.max(1, this.#live.length))) + i) % this.#n;
      if (this.#parts.has(partition) || this.#taken.some((l) => l.key.partition === partition)) continue;
      const lease = await this.#o.projections.acquire(this.#key(partition), this.owner, this.#leaseMs);
      if (lease) {
        this.#taken.push(lease);
        took = true;
      }
    }
    return took;
  }

  async #loadTaken(): Promise<void> {
    while (this.#taken.length > 0) {
      const lease = this.#taken.shift()!;
      const snapshot = await this.#o.projections.load(lease);
      const docs = new Map<string, unknown>();
      for (const [k, text] of snapshot.documents) docs.set(k, JSON.parse(text));
      this.#parts.set(lease.key.partition, {
        lease,
        start: snapshot.position,
        committed: snapshot.position,
        docs,
        written: new Map(snapshot.documents),
        dirty: new Set(),
        events: [],
        parked: [],
        applied: 0,
      });
    }
  }

  /**
   * Every `rebalanceMs`: heartbeat and compare the partitions held with the fair share (every third of the lease, the
   * leases are renewed first); a lost lease, a partition to take or to give back restarts the read.
   */
  async #tick(reader: AbortController): Promise<void> {
    if (reader.signal.aborted || this.#ticking) return;
    this.#ticking = true;
    try {
      await this.#renewAndBalance(reader);
    } finally {
      this.#ticking = false;
    }
  }

  async #renewAndBalance(reader: AbortController): Promise<void> {
    const { projections } = this.#o;
    if (Date.now() - this.#renewedAt >= this.#tickMs - this.#rebalanceMs / 2) {
      this.#renewedAt = Date.now();
      for (const [partition, part] of [...this.#parts]) {
        const ok = await projections.renew(part.lease, this.#leaseMs);
        if (!ok && this.#parts.get(partition) === part) {
          this.#parts.delete(partition);
          this.#o.onLost?.(partition, 'renewal-refused');
          reader.abort();
        }
      }
    }
    this.#live = await projections.heartbeat(this.#projection.name, this.#projection.version, this.owner, this.#leaseMs);
    const share = this.#share();
    if (this.#parts.size > share) reader.abort();
    else if (this.#parts.size < share && (await this.#acquireUpTo(share))) reader.abort();
  }

  #from(): bigint | null {
    let min: bigint | undefined;
    for (const part of this.#parts.values()) {
      if (part.start === null) return null;
      if (min === undefined || part.start < min) min = part.start;
    }
    return min ?? null;
  }

  /**
   * Reads the streams of the partitions held (the store filters by partition) after the oldest checkpoint held,
   * routes each event to its partition. True: caught up, not following.
   */
  async #read(signal: AbortSignal, follow: boolean): Promise<boolean> {
    for (const part of this.#parts.values()) part.start = part.committed; // every batch was committed before a read
    const after = this.#from();
    this.#readerPosition = after;
    this.#tailing = false;
    // the store reads only the streams of the partitions held (it skips the others without decoding them; holding
    // them all, it reads unfiltered); the partitions of one read do not change (a take or a give-back restarts it)
    const partition = this.#n > 1 && this.#parts.size < this.#n ? { partition: { count: this.#n, keep: this.owned() } } : {};
    const messages = subscribeAllPages(this.#o.store, {
      ...(after !== null ? { after } : {}),
      ...partition,
      signal,
      ...(this.#o.pageSize !== undefined ? { pageSize: this.#o.pageSize } : {}),
    });
    // catching up, the next stored page is read while this one is applied; live, nothing is read ahead
    for await (const message of readAhead(messages, (m) => m.kind === 'events' && !this.#tailing)) {
      if (signal.aborted || this.#failure !== null) return false;
      if (message.kind === 'caught-up') {
        this.#tailing = true;
        await this.#commitAll();
        if (this.#failure !== null) return false;
        this.#resolveCaughtUp();
        if (!follow) return true;
        continue;
      }
      for (const recorded of message.events) {
        if (signal.aborted || this.#failure !== null) return false;
        this.#route(recorded);
        this.#readerPosition = recorded.position;
        if (++this.#sinceCommit >= this.#batchSize) {
          // this batch commits while the next one is read; the reader waits only for the commit before it
          const previous = this.#commitChain;
          void this.#commitAll().catch((e: unknown) => this.#fail(e));
          await previous;
        } else {
          this.#flushTimer ??= setTimeout(
            () => void this.#commitAll().catch((e: unknown) => this.#fail(e)),
            this.#tailing ? this.#flushMs : this.#maxBatchMs,
          );
        }
      }
    }
    return false;
  }

  #route(recorded: RecordedEvent): void {
    const part = this.#parts.get(this.#partitionOf(recorded.stream));
    if (!part || (part.start !== null && recorded.position <= part.start)) return;
    const parsed = toLogEvent(recorded);
    if (E.isLeft(parsed)) {
      this.#cannotApply(part, recorded, parsed.left);
      return;
    }
    const where = { stream: recorded.stream, revision: recorded.revision, position: recorded.position };
    const projection = this.#projection;
    if (isTableProjection(projection)) {
      if (isKnownEvent(parsed.right)) {
        const event = { ...where, event: parsed.right } as ProjectionEvent;
        try {
          if (projection.filter && !projection.filter(event)) return;
        } catch (e) {
          this.#cannotApply(part, recorded, e);
          return;
        }
        part.events.push(event);
      }
      return;
    }
    const key = isKeyedProjection(projection) ? recorded.stream : '';
    const fold = projection as unknown as Projection<unknown>;
    const state = part.docs.has(key) ? part.docs.get(key) : JSON.parse(JSON.stringify(fold.initialState));
    try {
      part.docs.set(key, applyProjectionEvent(fold, state, where, parsed.right));
    } catch (e) {
      this.#rederive(part, key);
      this.#cannotApply(part, recorded, e);
      return;
    }
    part.dirty.add(key);
    part.applied++;
    part.events.push({ ...where, event: parsed.right } as ProjectionEvent);
  }

  /** After a failed `evolve`: the key's state back to its committed text plus this batch's events before the failure. */
  #rederive(part: Part, key: string): void {
    const fold = this.#projection as unknown as Projection<unknown>;
    const text = part.written.get(key);
    let state: unknown = text !== undefined ? JSON.parse(text) : JSON.parse(JSON.stringify(fold.initialState));
    for (const e of part.events) {
      if ((key === '' || e.stream === key) && !part.parked.some((p) => p.position === e.position)) {
        state = applyProjectionEvent(fold, state, e, e.event);
      }
    }
    if (text === undefined && !part.events.some((e) => key === '' || e.stream === key)) part.docs.delete(key);
    else part.docs.set(key, state);
  }

  #cannotApply(part: Part, recorded: RecordedEvent, cause: unknown): void {
    if (finalPolicy(this.#o.failure ?? 'stop') === 'park') {
      part.parked.push({ position: recorded.position, stream: recorded.stream, revision: recorded.revision, error: oneLine(cause) });
      return;
    }
    this.#fail(new ProjectionFailedError(this.#projection.name, this.#projection.version, recorded.stream, recorded.position, cause));
  }

  #fail(e: unknown): void {
    if (this.#failure === null) this.#failure = e;
    this.#reader?.abort();
    this.#stop.abort();
  }

  #clearFlush(): void {
    if (this.#flushTimer) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = null;
    }
  }

  /**
   * Commits every held partition: in one transaction when the store can (`commitPartitions`: a batch costs one
   * transaction however many partitions are held), else each in its own transaction, side by side. A commit starts
   * once the one before it ended (commits of a partition never overlap, and land in order). Rejects with the first
   * failure, once every partition's commit settled.
   */
  #commitAll(): Promise<void> {
    this.#clearFlush();
    this.#sinceCommit = 0;
    const next = this.#commitChain.then(async () => {
      if (this.#abandoned || this.#failure !== null) return;
      const parts = [...this.#parts];
      if (parts.length > 1 && this.#o.projections.commitPartitions) return this.#commitTogether(parts);
      const results = await Promise.allSettled(parts.map(([partition, part]) => this.#commitPart(partition, part)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    });
    this.#commitChain = next.catch(() => undefined);
    return next;
  }

  /**
   * What a partition's commit holds (null: nothing to commit): the position the reader reached, the changed documents,
   * and the events and parked events routed since the last commit, taken from the partition (the next batch is read
   * while this one commits).
   */
  #prepare(partition: number, part: Part): Prepared | null {
    const reached = this.#readerPosition;
    const position = reached !== null && (part.start === null || reached > part.start) ? reached : part.start;
    if (position === null) return null;
    if (position === part.committed && part.events.length === 0 && part.parked.length === 0 && part.dirty.size === 0) return null;
    const documents = new Map<string, string>();
    for (const key of part.dirty) {
      const value = part.docs.get(key);
      const bad = findNonJsonPath(value);
      if (bad !== null) throw new ProjectionStateNotJsonError(this.#projection.name, bad);
      const text = JSON.stringify(value);
      if (text !== part.written.get(key)) documents.set(key, text);
    }
    const events = part.events;
    const parked = part.parked;
    part.events = [];
    part.parked = [];
    part.dirty.clear();
    const applied = part.applied;
    part.applied = 0;
    // the texts count as written from now on: the next batch (read while this one commits) compares against them,
    // and if this commit fails the partition is dropped and loaded again from the store
    for (const [k, text] of documents) part.written.set(k, text);
    const table = isTableProjection(this.#projection);
    return {
      partition,
      part,
      events,
      commit: { position, documents: table ? new Map() : documents, parked, applied: table ? events.length : applied },
    };
  }

  async #commitPart(partition: number, part: Part): Promise<void> {
    const prepared = this.#prepare(partition, part);
    if (prepared === null) return;
    const { projections } = this.#o;
    try {
      if (isTableProjection(this.#projection)) {
        await this.#commitTable(prepared.events, (write) => projections.commit(part.lease, { ...prepared.commit, write }));
      } else {
        await projections.commit(part.lease, prepared.commit);
      }
    } catch (e) {
      if (isProjectionFailedError(e)) throw e;
      await this.#lost([prepared], e);
      return;
    }
    this.#committed(prepared);
  }

  /** The held partitions' commits in one transaction of the store (`commitPartitions`); a table projection's handler runs once, over the events of all of them in the read's order. */
  async #commitTogether(parts: readonly [number, Part][]): Promise<void> {
    const prepared = parts.map(([partition, part]) => this.#prepare(partition, part)).filter((p): p is Prepared => p !== null);
    if (prepared.length === 0) return;
    const entries = prepared.map((p) => ({ lease: p.part.lease, commit: p.commit }));
    const commitPartitions = this.#o.projections.commitPartitions!.bind(this.#o.projections);
    try {
      if (isTableProjection(this.#projection)) {
        const events = prepared.length === 1 ? prepared[0]!.events : inReadOrder(prepared.map((p) => p.events));
        await this.#commitTable(events, (write) => commitPartitions(entries, write));
      } else {
        await commitPartitions(entries);
      }
    } catch (e) {
      if (isProjectionFailedError(e)) throw e;
      await this.#lost(prepared, e);
      return;
    }
    for (const p of prepared) this.#committed(p);
  }

  #committed(prepared: Prepared): void {
    prepared.part.committed = prepared.commit.position;
    this.#o.onCommit?.(prepared.partition, prepared.commit.position);
  }

  /**
   * A commit that did not land. Fenced: another worker holds the partition now. Any other failure of the store (the
   * connection lost, maybe after COMMIT was sent): whether the commit landed is unknown. Either way the in-memory
   * state may be ahead of what is committed, so every partition of the commit is dropped (and released, but the
   * fenced one); taken again, it is loaded from what the store holds.
   */
  async #lost(prepared: readonly Prepared[], e: unknown): Promise<void> {
    const fenced = isProjectionFencedError(e) ? e : null;
    for (const { partition, part } of prepared) {
      if (this.#parts.get(partition) === part) this.#parts.delete(partition);
      const self = fenced !== null && (prepared.length === 1 || fenced.partition === partition);
      this.#o.onLost?.(partition, self ? 'fenced' : 'commit-failed');
      if (!self) await this.#o.projections.release(part.lease).catch(() => undefined);
    }
    this.#reader?.abort();
  }

  /** A table projection's commit: the handler in the transaction; on failure the policy (retry, park, stop). */
  async #commitTable(events: readonly ProjectionEvent[], commit: (write: PartitionsWrite<Tx>) => Promise<void>): Promise<void> {
    const projection = this.#projection as TableProjection<Tx>;
    const tables = this.#tables;
    const policy = this.#o.failure ?? 'stop';
    const whole = (tx: Tx): Promise<void> =>
      events.length === 0
        ? Promise.resolve()
        : projection.handle(events, tx, tables).catch((e: unknown) => {
            throw new HandlerFailure(null, e);
          });
    const delays = retryDelays(policy);
    for (let attempt = 0; ; attempt++) {
      try {
        await commit(whole);
        return;
      } catch (e) {
        if (!(e instanceof HandlerFailure)) throw e;
        if (attempt >= delays.length) break;
        await this.#sleep(delays[attempt]!, new AbortController().signal);
      }
    }
    // isolate the failing events: each in its own savepoint
    const stop = finalPolicy(policy) === 'stop';
    try {
      await commit(async (tx, isolate) => {
        const failed: ParkedEvent[] = [];
        for (const event of events) {
          const error = await isolate(() => projection.handle([event], tx, tables));
          if (error === null) continue;
          if (stop) throw new HandlerFailure(event, error);
          failed.push({ position: event.position, stream: event.stream, revision: event.revision, error: oneLine(error) });
        }
        return failed;
      });
    } catch (e) {
      if (e instanceof HandlerFailure && e.event) {
        throw new ProjectionFailedError(projection.name, projection.version, e.event.stream, e.event.position, e.cause);
      }
      throw e;
    }
  }
}

/**
 * Starts a projection worker: it takes its share of the projection's partitions (leases with an epoch in
 * `projections`), reads every stream in global order after the oldest checkpoint it holds (catch-up, then live),
 * applies each event to its stream's partition — a fold (`Projection`, `KeyedProjection`) in memory, a table
 * projection in the commit's transaction — and commits every `batchSize` events, `flushIntervalMs` after the oldest
 * uncommitted one, when caught up and on `stop()`. Every commit is fenced by the lease's epoch: a worker that lost a
 * partition cannot commit to it. Workers sharing the store rebalance: every third of `leaseMs` each one renews its
 * leases and takes or gives back partitions to hold its fair share of the live workers; a dead worker's partitions
 * are taken once its leases expire.
 */
export const startProjectionWorker = <Tx>(projection: AnyProjection<Tx>, options: ProjectionWorkerOptions<Tx>): ProjectionWorker =>
  new Worker(projection, options);
