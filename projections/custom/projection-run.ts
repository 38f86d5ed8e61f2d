import type { Observable } from 'rxjs';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { CheckpointStore, ProjectionKey } from '../checkpoints/checkpoint-store.js';

/** Options of `runProjection`: the store, the checkpoint store, the source and the commit policy. */
export interface RunProjectionOptions {
  readonly store: EventStore;
  readonly checkpoints: CheckpointStore;
  /**
   * Fold this one stream; positions are its revisions. Omit to fold every stream in the store's global order;
   * positions are then global positions. A projection keeps one source for its whole life (its checkpoint is a
   * position in that source's coordinates).
   * @defaultValue every stream (readAll order)
   */
  readonly stream?: string;
  /**
   * `'checkpoint'` resumes from the saved checkpoint (or the start when there is none); `'start'` ignores it and
   * rebuilds from the start (its first commit replaces the old checkpoint).
   * @defaultValue 'checkpoint'
   */
  readonly from?: 'checkpoint' | 'start';
  /** Commit once this many events (folded or filtered out) are uncommitted. @defaultValue 100 */
  readonly batchSize?: number;
  /** Commit at most this long after the oldest uncommitted event, so an idle tail is committed too. @defaultValue 1000 */
  readonly flushIntervalMs?: number;
}

/** A running projection, as `runProjection` returns it. */
export interface ProjectionRun<S> {
  readonly key: ProjectionKey;
  /** The state after the last folded event. */
  state(): S;
  /** The last folded position (null before the first event). */
  position(): bigint | null;
  /** The last committed position (null when nothing is committed). */
  checkpoint(): bigint | null;
  /** Every committed position, starting with the loaded one (null before any). */
  readonly checkpoints$: Observable<bigint | null>;
  /** Resolves when the stored history is folded and committed (the live tail starts); rejects if the run ends first. */
  readonly caughtUp: Promise<void>;
  /** Resolves when the run stops or is abandoned; rejects with `ProjectionFailedError` (or a checkpoint store error). */
  readonly done: Promise<void>;
  /** Resolves once the event at `position` (or a later one) is folded; rejects if the run ends first. */
  waitFor(position: bigint): Promise<void>;
  /**
   * Lag = head position − checkpoint (events not yet committed). One stream: O(1) via `revision`; all streams:
   * reads the tail after the checkpoint, O(lag).
   */
  lag(): Promise<bigint>;
  /** Commits the current low-water mark now. */
  flush(): Promise<void>;
  /** Ends the store iteration, commits what was folded, and resolves when the checkpoint is saved (never rejects: see `done`). */
  stop(): Promise<void>;
  /** Ends the run WITHOUT committing (a simulated crash): a save already in progress may still land, nothing more. */
  abandon(): void;
}
