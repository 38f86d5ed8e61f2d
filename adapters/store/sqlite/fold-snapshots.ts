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
