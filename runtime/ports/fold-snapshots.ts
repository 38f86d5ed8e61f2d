/**
 * Fold snapshots: a store that can keep, beside a stream, the session fold's state at checkpoints (a cache of a
 * fold of the log, never data). A reader starts folding at the snapshot nearest below where it reads instead of at
 * seq 0, after checking the snapshot's claim against the log: the event at `seq` must carry `id` (and `hash`, when
 * the snapshot names one). See docs/store-jsonl.md, "Fold snapshots".
 */

/** One snapshot: the fold's state after the event at `seq`, and what that event is. */
export interface FoldSnapshot {
  /** The seq (stream revision) of the last event folded into `state`. */
  readonly seq: number;
  /** The id of that event. */
  readonly id: string;
  /** Its chain hash, when the event has one. */
  readonly hash?: string;
  /** The fold's version (domain/session-state-snapshot.ts SESSION_FOLD_VERSION) the state was taken with. */
  readonly version: number;
  /** The fold's state as plain JSON (SessionStateJson). */
  readonly state: unknown;
}

/** The events a fold reads, `[from, to)` by seq. */
export interface SnapshotRange {
  readonly from: number;
  readonly to: number;
}

/**
 * What `loadFoldSnapshotsNear` answers, cut from every snapshot of a stream (in seq order): the last one below
 * `range.from` and every one with `range.from <= seq < range.to`.
 */
export const snapshotsNear = (snapshots: readonly FoldSnapshot[], range: SnapshotRange): FoldSnapshot[] => {
  let below = -1;
  for (let i = 0; i < snapshots.length && snapshots[i]!.seq < range.from; i++) below = i;
  return snapshots.filter((s, i) => i === below || (s.seq >= range.from && s.seq < range.to));
};

/** A store that keeps fold snapshots beside its streams. */
export interface FoldSnapshotSource {
  /**
   * The snapshots kept for `stream`, in seq order; empty when there are none, or when their file is missing, torn or
   * damaged (a snapshot is a cache: never an error).
   */
  loadFoldSnapshots(stream: string): Promise<readonly FoldSnapshot[]>;
  /**
   * The snapshots a fold of `[range.from, range.to)` needs, in seq order: the last one below `from` (where the fold
   * may start) and every one with `from <= seq < to` (whose claims the fold checks as it passes them) — what
   * {@link snapshotsNear} cuts from `loadFoldSnapshots`, without reading or decoding the others when the store can
   * (the JSONL store bisects its snapshot file). A cache: never an error.
   */
  loadFoldSnapshotsNear(stream: string, range: SnapshotRange): Promise<readonly FoldSnapshot[]>;
  /**
   * Replaces the snapshots kept for `stream` (best effort: a store opened read-only, or a failing write, keeps
   * nothing and resolves anyway).
   */
  saveFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<void>;
  /**
   * Adds `snapshots` (in seq order) after the last one kept for `stream`, without rewriting the others: what a fold
   * that only took snapshots past the stream's last one writes (the runtime's live checkpoints, a read of the log's
   * end). The seqs must be above the last one kept: a snapshot at or below it is skipped (the kept ones stay as they
   * are, so a concurrent writer of the same snapshots never puts them out of order). Best effort, as
   * `saveFoldSnapshots`. Optional: a store without it has its snapshots replaced whole instead.
   *
   * Resolves to the seq of the last snapshot the store keeps for `stream` once the append is done (-1: none), so a
   * writer learns where the stream's snapshots end without reading them again; -1 too when the store wrote nothing
   * because it cannot (opened read-only, a failing write).
   */
  appendFoldSnapshots?(stream: string, snapshots: readonly FoldSnapshot[]): Promise<number>;
}

/** Does this store keep fold snapshots? */
export const isFoldSnapshotSource = (store: unknown): store is FoldSnapshotSource =>
  typeof store === 'object' &&
  store !== null &&
  typeof (store as FoldSnapshotSource).loadFoldSnapshots === 'function' &&
  typeof (store as FoldSnapshotSource).loadFoldSnapshotsNear === 'function' &&
  typeof (store as FoldSnapshotSource).saveFoldSnapshots === 'function';
