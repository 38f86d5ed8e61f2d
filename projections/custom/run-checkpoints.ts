import { BehaviorSubject, filter, map, type Observable } from 'rxjs';
import { findNonJsonPath } from '../../domain/json.js';
import type { ProjectionKey } from '../checkpoints/checkpoint-store.js';
import { ProjectionStateNotJsonError } from '../errors.js';
import type { Projection } from './define-projection.js';
import type { RunProjectionOptions } from './projection-run.js';

/** Where a run's fold stands when it commits. */
export interface FoldProgress<S> {
  /** The contiguous low-water mark: the highest position with nothing unprocessed at or before it (null: none). */
  readonly mark: bigint | null;
  /** The last folded position (null before the first event). */
  readonly position: bigint | null;
  /** The state after the last folded event. */
  readonly state: S;
}

/**
 * The state of a run that starts without a checkpoint: a JSON copy of the projection's `initialState`. Throws
 * `ProjectionStateNotJsonError` when `initialState` is not JSON.
 */
export const initialStateOf = <S>(projection: Projection<S>): S => {
  const bad = findNonJsonPath(projection.initialState);
  if (bad !== null) throw new ProjectionStateNotJsonError(projection.name, bad);
  return JSON.parse(JSON.stringify(projection.initialState)) as S;
};

/**
 * A run's checkpoint commits: which position is committed, the saves (queued one at a time, in order, position and
 * state together) and when to commit (every `batchSize` events, `flushIntervalMs` after the oldest uncommitted one).
 */
export class RunCheckpoints<S> {
  /** Every committed position, starting with the loaded one (null before any). */
  readonly checkpoints$: Observable<bigint | null>;

  readonly #key: ProjectionKey;
  readonly #options: RunProjectionOptions;
  readonly #progress: () => FoldProgress<S>;
  readonly #onTimerError: (e: unknown) => void;
  readonly #batchSize: number;
  readonly #flushIntervalMs: number;
  readonly #committed$ = new BehaviorSubject<{ position: bigint | null }>({ position: null });
  #committed: bigint | null = null;
  #queuedCommit: bigint | null = null;
  #sinceCommit = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #saving: Promise<void> = Promise.resolve();
  #abandoned = false;

  /**
   * Commits `progress()` under `key` to `options.checkpoints`; a commit the flush timer starts that fails goes to
   * `onTimerError`.
   */
  constructor(key: ProjectionKey, options: RunProjectionOptions, progress: () => FoldProgress<S>, onTimerError: (e: unknown) => void) {
    this.#key = key;
    this.#options = options;
    this.#progress = progress;
    this.#onTimerError = onTimerError;
    this.#batchSize = Math.max(1, options.batchSize ?? 100);
    this.#flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 1000);
    this.checkpoints$ = this.#committed$.pipe(
      map((c) => c.position),
      filter((p, i) => i === 0 || p !== null),
    );
  }

  /** The last committed position (null when nothing is committed). */
  get committed(): bigint | null {
    return this.#committed;
  }

  /** The queued saves: settles after the last one queued so far. */
  get saving(): Promise<void> {
    return this.#saving;
  }

  /** Takes a loaded checkpoint's position as committed, and emits it. */
  restored(position: bigint): void {
    this.#committed = position;
    this.#queuedCommit = position;
    this.#committed$.next({ position });
  }

  /**
   * Counts one event folded or filtered out: once `batchSize` are uncommitted, commits and returns that commit;
   * otherwise arms the flush timer (if it is not armed) and returns undefined.
   */
  counted(): Promise<void> | undefined {
    if (++this.#sinceCommit >= this.#batchSize) return this.commit();
    this.#timer ??= setTimeout(() => void this.commit().catch(this.#onTimerError), this.#flushIntervalMs);
    return undefined;
  }

  /** Queues a save of the low-water mark and the state folded up to it; saves run one at a time, in order. */
  commit(): Promise<void> {
    this.stopTimer();
    if (this.#abandoned) return this.#saving;
    const { mark, position, state } = this.#progress();
    // The state is the fold up to `position`; it is committable only when nothing before it is unprocessed.
    if (mark === null || mark === this.#queuedCommit || mark !== position) return this.#saving;
    const bad = findNonJsonPath(state);
    if (bad !== null) return Promise.reject(new ProjectionStateNotJsonError(this.#key.name, bad));
    const checkpoint = { position: mark, state: JSON.stringify(state) };
    this.#queuedCommit = mark;
    this.#sinceCommit = 0;
    this.#saving = this.#saving.then(async () => {
      if (this.#abandoned) return;
      await this.#options.checkpoints.save(this.#key, checkpoint);
      this.#committed = mark;
      this.#committed$.next({ position: mark });
    });
    return this.#saving;
  }

  /** Commits nothing more: a save already in progress may still land, the queued ones are skipped. */
  abandon(): void {
    this.#abandoned = true;
  }

  /** Disarms the flush timer. */
  stopTimer(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
  }

  /** Completes `checkpoints$`. */
  complete(): void {
    this.#committed$.complete();
  }
}
