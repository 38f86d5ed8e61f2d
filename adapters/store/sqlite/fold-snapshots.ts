/** The SQLite store's FoldSnapshotSource: each stream's fold snapshots as one JSON row of `fold_snapshots`. */
import type { FoldSnapshot } from '../../../runtime/ports/fold-snapshots.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

const isSnapshot = (x: unknown): x is FoldSnapshot =>
  typeof x === 'object' && x !== null && Number.isSafeInteger((x as FoldSnapshot).seq) && typeof (x as FoldSnapshot).id === 'string' && typeof (x as FoldSnapshot).version === 'number';

/** The snapshots kept for `stream`, in seq order; empty when none or unreadable (a cache: never an error). */
export const loadSnapshots = (ctx: SqliteContext, stream: string): readonly FoldSnapshot[] => {
  try {
    const row = onOpenStore(ctx, () => ctx.stmt('SELECT snapshots FROM fold_snapshots WHERE stream = ?').get(stream)) as { snapshots: string } | undefined;
    if (row === undefined) return [];
    const parsed = JSON.parse(row.snapshots) as unknown;
    return Array.isArray(parsed) && parsed.every(isSnapshot) ? parsed.sort((a, b) => a.seq - b.seq) : [];
  } catch {
    return [];
  }
};

/** Replaces the snapshots kept for `stream` (best effort: read-only, a deleted stream or a failing write keep nothing). */
export const saveSnapshots = (ctx: SqliteContext, stream: string, snapshots: readonly FoldSnapshot[]): void => {
  if (ctx.readOnly || ctx.isClosed()) return;
  try {
    ctx.stmt('INSERT OR REPLACE INTO fold_snapshots (stream, snapshots) SELECT ?, ? WHERE EXISTS (SELECT 1 FROM streams WHERE stream = ?)').run(stream, JSON.stringify(snapshots), stream);
  } catch {
    // a cache: a failed write keeps nothing
  }
};

/**
 * Adds `snapshots` past the last one kept for `stream` (one immediate transaction): each is appended to the row's
 * JSON array by SQLite (`json_insert`) when its seq is above the array's last one, so no snapshot is decoded here;
 * SQLite still writes the row whole (the snapshots of a stream are one row). Best effort, as {@link saveSnapshots}.
 * Answers the seq of the row's last snapshot after it (-1: none, or nothing could be written).
 */
export const appendSnapshots = (ctx: SqliteContext, stream: string, snapshots: readonly FoldSnapshot[]): number => {
  if (ctx.readOnly || ctx.isClosed()) return -1;
  try {
    return ctx.db
      .transaction((): number => {
        for (const s of snapshots) {
          const json = JSON.stringify({ seq: s.seq, id: s.id, ...(s.hash !== undefined ? { hash: s.hash } : {}), version: s.version, state: s.state });
          const updated = ctx
            .stmt("UPDATE fold_snapshots SET snapshots = json_insert(snapshots, '$[#]', json(?)) WHERE stream = ? AND coalesce(json_extract(snapshots, '$[#-1].seq'), -1) < ?")
            .run(json, stream, s.seq);
          if (updated.changes > 0) continue;
          // no row yet (a row whose last snapshot is at or above this seq is left as it is)
          ctx
            .stmt('INSERT INTO fold_snapshots (stream, snapshots) SELECT ?, json_array(json(?)) WHERE EXISTS (SELECT 1 FROM streams WHERE stream = ?) AND NOT EXISTS (SELECT 1 FROM fold_snapshots WHERE stream = ?)')
            .run(stream, json, stream, stream);
        }
        const last = ctx.stmt("SELECT json_extract(snapshots, '$[#-1].seq') AS seq FROM fold_snapshots WHERE stream = ?").get(stream) as { seq: number | null } | undefined;
        return typeof last?.seq === 'number' ? last.seq : -1;
      })
      .immediate();
  } catch {
    // a cache: a failed write keeps what was there
    return -1;
  }
};
