import { ProjectionSupersededError } from '../errors.js';
import type { ProjectionWorker } from './projection-worker.js';
import type { ProjectionStore } from './projection-store.js';

/** Options of {@link stopWhenSuperseded}. */
export interface SupersededWatchOptions {
  /** Where the live pointer is kept (the worker's projection store). */
  readonly projections: Pick<ProjectionStore<unknown>, 'liveVersion'>;
  /** How often the live pointer is read, ms. @defaultValue 2000 */
  readonly intervalMs?: number;
  /** Told once when the worker is being stopped because a newer version went live. */
  readonly onSuperseded?: (error: ProjectionSupersededError) => void;
}

/** A worker under {@link stopWhenSuperseded}. */
export interface WatchedWorker {
  /**
   * Settles as the worker's `done`, except that it rejects with {@link ProjectionSupersededError} when the worker
   * was stopped because a newer version went live.
   */
  readonly done: Promise<void>;
}

/**
 * Watches the projection's live pointer (`ProjectionStore.liveVersion`, moved by `projections rebuild` at its swap)
 * for a running worker: once a version newer than the worker's is live — at start, or later — the worker is stopped
 * (its batch committed, its leases released) and `done` rejects with `ProjectionSupersededError`
 * (`projection-superseded`). A live version older than the worker's (a rebuild not swapped yet, or none swapped)
 * changes nothing. Failed reads of the pointer are tried again at the next interval.
 */
export const stopWhenSuperseded = (
  projection: { readonly name: string; readonly version: number },
  worker: ProjectionWorker,
  options: SupersededWatchOptions,
): WatchedWorker => {
  const intervalMs = Math.max(10, options.intervalMs ?? 2000);
  let superseded: ProjectionSupersededError | null = null;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = async (): Promise<void> => {
    const live = await options.projections.liveVersion(projection.name).catch(() => null);
    if (ended) return;
    if (live !== null && live > projection.version) {
      superseded = new ProjectionSupersededError(projection.name, projection.version, live);
      options.onSuperseded?.(superseded);
      await worker.stop();
      return;
    }
    timer = setTimeout(() => void check(), intervalMs);
  };
  void check();
  const done = worker.done.then(
    () => {
      ended = true;
      clearTimeout(timer);
      if (superseded !== null) throw superseded;
    },
    (e: unknown) => {
      ended = true;
      clearTimeout(timer);
      throw superseded ?? e;
    },
  );
  done.catch(() => undefined);
  return { done };
};
