import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../domain/events.js';
import { initialResumeFacts, stepResumeFacts, type ResumeFacts } from '../domain/resume-facts.js';
import { initialSessionState, stepSession, type SessionState } from '../domain/session-fold.js';
import type { EventStore } from './ports/event-store.js';
import type { FoldSnapshot, FoldSnapshotSource } from './ports/fold-snapshots.js';
import { isStoreClosedError } from './ports/store-errors.js';
import type { Logger } from './logger.js';
import type { LoopGate } from './loop-slices.js';
import { checkpointSnapshot, foldRange, SNAPSHOT_EVERY, usableBelow } from './session-range.js';

/**
 * Fold snapshots of live sessions (docs/store-jsonl.md, "Fold snapshots"): once a session's stored log has passed a
 * checkpoint (every `every` events) beyond the last snapshot the store keeps, one catch-up fold runs in the
 * background, from that snapshot to the log's end (runtime/session-range.ts `foldRange`), and the store appends the
 * snapshots it took. So a session that ran live leaves its snapshots behind, and a host that restarts reads its
 * history and resumes it from the last one instead of folding it from seq 0.
 *
 * The catch-up folds the events the live log still holds in memory (`HeldEvents`: the runtime's own appends, stored
 * by then, the same events a read of the store gives back) from the state of the session's previous checkpoint, kept
 * in memory, or from the last snapshot the store keeps once its claim is checked against the held event at its seq:
 * no event is read back from the store or parsed again. It reads the store (`foldRange`) only when the events are not
 * held (a session resumed from a snapshot, before its window; a session disposed meanwhile) or the store cannot
 * append snapshots.
 */

/** The most events a catch-up folds from memory between two turns of the event loop. */
const HELD_SLICE = 256;
/** The longest a catch-up folds from memory between two turns of the event loop, ms (a large state's events cost more). */
const HELD_SLICE_MS = 2;

/** The events a live log holds in memory by seq (undefined: not held), for the catch-ups' folds. */
export type HeldEvents = (stream: string, seq: number) => LogEvent | undefined;

/** The fold after one checkpoint, kept for the next catch-up. */
interface Checkpoint {
  readonly seq: number;
  readonly state: SessionState;
  readonly facts: ResumeFacts;
}

/** `RuntimeOptions.foldSnapshots`: the live checkpoints, with their defaults. */
export interface FoldSnapshotOptions {
  /**
   * Take the snapshots of every live session in the background as its log passes each checkpoint. Never for a
   * runtime with `encryption` (a fold state holds message content), nor with a store that keeps no fold snapshots.
   * @defaultValue true
   */
  readonly live?: boolean;
  /** The distance between two checkpoints, in events (readers take theirs every 512). @defaultValue 512 (`SNAPSHOT_EVERY`) */
  readonly every?: number;
}

/** What is known of one session's snapshots, and its catch-up. */
interface Entry {
  /** The seq of the last snapshot the store keeps (-1: none); undefined until read. */
  last: number | undefined;
  /** The seq after the last event known stored. */
  end: number;
  /** The catch-up in flight, if any (at most one per session; later commits are coalesced into it). */
  running: Promise<void> | null;
  /** The store keeps none of this session's snapshots (sealed content, a store that writes none): no more catch-ups. */
  off: boolean;
  /** The fold at the last checkpoint this runtime took (`last`), when it took it from held events. */
  fold: Checkpoint | null;
}

/**
 * The live checkpoints of one runtime's sessions. `committed` is told of every append a session's write-behind made;
 * it never waits, never throws, and starts at most one catch-up per session. A failed catch-up is logged (the next
 * checkpoint tries again); a store that is closed ends them quietly.
 */
export class LiveSnapshots {
  readonly #store: EventStore & FoldSnapshotSource;
  readonly #logger: Logger;
  readonly #every: number;
  readonly #held: HeldEvents;
  readonly #gate: LoopGate | undefined;
  readonly #sessions = new Map<string, Entry>();

  /**
   * `held`: the events the live logs hold (none by default: every catch-up reads the store); `gate`: where a catch-up
   * waits between two slices of its fold (the runtime's `turnGate`, whose budget per turn of the loop bounds the
   * slices of every session's catch-up together; without one, each slice waits for a `setImmediate` of its own).
   */
  constructor(store: EventStore & FoldSnapshotSource, logger: Logger, every = SNAPSHOT_EVERY, held: HeldEvents = () => undefined, gate?: LoopGate) {
    this.#store = store;
    this.#logger = logger;
    this.#every = every;
    this.#held = held;
    this.#gate = gate;
  }

  /** The seq of the last checkpoint below `end` (-1 when the log has not reached one). */
  #checkpointBelow(end: number): number {
    return Math.floor(end / this.#every) * this.#every - 1;
  }

  /** The events `[.., end)` of `stream` are stored: a catch-up starts when they passed a checkpoint not yet taken. */
  committed(stream: string, end: number): void {
    let entry = this.#sessions.get(stream);
    if (entry === undefined) {
      entry = { last: undefined, end, running: null, off: false, fold: null };
      this.#sessions.set(stream, entry);
    }
    entry.end = Math.max(entry.end, end);
    if (entry.off || entry.running !== null || this.#checkpointBelow(entry.end) < 0) return;
    if (entry.last !== undefined && this.#checkpointBelow(entry.end) <= entry.last) return;
    const e = entry;
    e.running = this.#catchUp(stream, e).finally(() => {
      e.running = null;
    });
  }

  /** Forgets a session (its agent was disposed); a catch-up in flight runs to its end. */
  forget(stream: string): void {
    const e = this.#sessions.get(stream);
    if (e === undefined) return;
    if (e.running === null) this.#sessions.delete(stream);
    else
      void e.running.finally(() => {
        if (this.#sessions.get(stream) === e && e.running === null) this.#sessions.delete(stream);
      });
  }

  /** Resolves once no catch-up is in flight (including those that commits meanwhile start). */
  async settled(): Promise<void> {
    for (;;) {
      const running = [...this.#sessions.values()].flatMap((e) => (e.running === null ? [] : [e.running]));
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  async #lastKept(stream: string): Promise<number> {
    const near = await this.#store.loadFoldSnapshotsNear(stream, { from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER });
    return near.at(-1)?.seq ?? -1;
  }

  async #catchUp(stream: string, e: Entry): Promise<void> {
    try {
      if (e.last === undefined) e.last = await this.#lastKept(stream);
      for (let target = this.#checkpointBelow(e.end); target > e.last; target = this.#checkpointBelow(e.end)) {
        const fromHeld = await this.#foldHeld(stream, e, target);
        let last: number | undefined;
        if (fromHeld === null) {
          // from the nearest snapshot to the log's end (events stored meanwhile included): the fold appends what it took
          e.fold = null;
          const folded = await foldRange(this.#store, stream, { from: e.end, to: Number.MAX_SAFE_INTEGER }, null, { every: this.#every, keepSteps: false });
          last = folded.lastSnapshot;
        } else {
          // the append answers where the store's snapshots end now
          last = await this.#store.appendFoldSnapshots!(stream, fromHeld.taken);
        }
        // read again only when the fold's write could not answer it
        last ??= await this.#lastKept(stream);
        if (last < target) {
          // nothing kept (sealed content, a read-only store, a failed write of the cache): not tried again
          e.off = true;
          e.fold = null;
          return;
        }
        e.last = last;
        e.fold = fromHeld !== null && last === target ? fromHeld.fold : null;
      }
    } catch (err) {
      e.fold = null;
      if (isStoreClosedError(err)) {
        e.off = true;
        return;
      }
      // tried again at the next checkpoint (not at every append until then)
      e.last = Math.max(e.last ?? -1, this.#checkpointBelow(e.end));
      this.#logger.warn(`the fold snapshots of session ${stream} could not be taken (tried again at its next checkpoint)`, err);
    }
  }

  /**
   * The snapshots from the last one kept (`e.last`) to `target`, folded from the events the live log holds, and the
   * fold at `target`; null when the store cannot append them, the fold's start is not known (the state kept at the
   * previous checkpoint, or the store's last snapshot whose claim the held event at its seq confirms), or an event
   * of the range is not held: the caller reads the store instead.
   */
  async #foldHeld(stream: string, e: Entry, target: number): Promise<{ readonly taken: FoldSnapshot[]; readonly fold: Checkpoint } | null> {
    if (this.#store.appendFoldSnapshots === undefined) return null;
    const last = e.last!;
    let start: Checkpoint | null = e.fold !== null && e.fold.seq === last ? e.fold : null;
    if (start === null && last < 0) start = { seq: -1, state: initialSessionState(), facts: initialResumeFacts };
    if (start === null) {
      const kept = usableBelow(await this.#store.loadFoldSnapshotsNear(stream, { from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER }));
      const claimed = kept === undefined ? undefined : this.#held(stream, kept.snapshot.seq);
      if (kept === undefined || kept.snapshot.seq !== last || claimed === undefined || claimed.id !== kept.snapshot.id || claimed.hash !== kept.snapshot.hash) return null;
      start = { seq: last, state: kept.state, facts: kept.facts };
    }
    let { state, facts } = start;
    const taken: FoldSnapshot[] = [];
    let sliceStart = 0;
    for (let seq = start.seq + 1; seq <= target; seq++) {
      // folded in slices, each after a turn of the loop: the catch-ups of many sessions that pass a checkpoint together
      // (and a long range: a session resumed whole, far past its last snapshot) do not hold the loop in one stretch;
      // a slice ends after HELD_SLICE events or HELD_SLICE_MS, whichever comes first (the events of a session with a
      // long pending list fold slower)
      // (the catch-ups of many sessions resume in one turn of the loop after their `setImmediate`s: the gate's budget
      // bounds them together)
      if ((seq - start.seq - 1) % HELD_SLICE === 0 || performance.now() - sliceStart >= HELD_SLICE_MS) {
        await (this.#gate !== undefined ? this.#gate.next() : new Promise((resolve) => setImmediate(resolve)));
        sliceStart = performance.now();
      }
      // every event of the range is held (a session disposed meanwhile holds none: the store is read instead)
      const event = this.#held(stream, seq);
      if (event === undefined || event.seq !== seq) return null;
      const step = stepSession(state, event);
      if (E.isLeft(step)) return null;
      state = step.right.state;
      facts = stepResumeFacts(facts, event);
      if ((seq + 1) % this.#every === 0) taken.push(checkpointSnapshot(event, state, facts));
    }
    return { taken, fold: { seq: target, state, facts } };
  }
}
