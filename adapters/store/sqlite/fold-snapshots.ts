/**
 * The SQLite store's FoldSnapshotSource: one row of `fold_snapshots` per snapshot, keyed by stream and seq (schema
 * version 2), so an append inserts rows and a fold near a range reads the rows it needs.
 */
import type { FoldSnapshot, SnapshotRange } from '../../../runtime/ports/fold-snapshots.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

const isSnapshot = (x: unknown): x is FoldSnapshot =>
  typeof x === 'object' && x !== null && Number.isSafeInteger((x as FoldSnapshot).seq) && typeof (x as FoldSnapshot).id === 'string' && typeof (x as FoldSnapshot).version === 'number';

/** The snapshot of a row; undefined when it does not decode, or names another seq than its key. */
const decodeRow = (row: { seq: number; snapshot: string }): FoldSnapshot | undefined => {
  try {
    const parsed = JSON.parse(row.snapshot) as unknown;
    return isSnapshot(parsed) && parsed.seq === row.seq ? parsed : undefined;
  } catch {
    return undefined;
  }
};

const encodeSnapshot = (s: FoldSnapshot): string => JSON.stringify({ seq: s.seq, id: s.id, ...(s.hash !== undefined ? { hash: s.hash } : {}), version: s.version, state: s.state });

type Row = { seq: number; snapshot: string };

/** The snapshots kept for `stream`, in seq order; empty when none or unreadable (a cache: never an error; a row that does not decode is skipped). */
export const loadSnapshots = (ctx: SqliteContext, stream: string): readonly FoldSnapshot[] => {
  try {
    const rows = onOpenStore(ctx, () => ctx.stmt('SELECT seq, snapshot FROM fold_snapshots WHERE stream = ? ORDER BY seq').all(stream)) as Row[];
    return rows.flatMap((r) => decodeRow(r) ?? []);
  } catch {
    return [];
  }
};

/**
 * What `snapshotsNear(loadSnapshots(stream), range)` answers, reading only those rows: the last one below `from` that
 * decodes, and every one with `from <= seq < to` that does.
 */
export const loadSnapshotsNear = (ctx: SqliteContext, stream: string, range: SnapshotRange): readonly FoldSnapshot[] => {
  try {
    return onOpenStore(ctx, () => {
      const last = ctx.stmt('SELECT seq, snapshot FROM fold_snapshots WHERE stream = ? AND seq < ? ORDER BY seq DESC LIMIT 1').get(stream, range.from) as Row | undefined;
      let below = last === undefined ? undefined : decodeRow(last);
      if (last !== undefined && below === undefined) {
        // a row that does not decode is skipped, as the whole load skips it: the next one below
        for (const r of ctx.stmt('SELECT seq, snapshot FROM fold_snapshots WHERE stream = ? AND seq < ? ORDER BY seq DESC').all(stream, last.seq) as Row[]) {
          below = decodeRow(r);
          if (below !== undefined) break;
        }
      }
      const within = (range.to > range.from ? (ctx.stmt('SELECT seq, snapshot FROM fold_snapshots WHERE stream = ? AND seq >= ? AND seq < ? ORDER BY seq').all(stream, range.from, range.to) as Row[]) : []).flatMap((r) => decodeRow(r) ?? []);
      return below === undefined ? within : [below, ...within];
    });
  } catch {
    return [];
  }
};

/** Replaces the snapshots kept for `stream` (best effort: read-only, a deleted stream or a failing write keep nothing). */
export const saveSnapshots = (ctx: SqliteContext, stream: string, snapshots: readonly FoldSnapshot[]): void => {
  if (ctx.readOnly || ctx.isClosed()) return;
  try {
    ctx.db
      .transaction(() => {
        ctx.stmt('DELETE FROM fold_snapshots WHERE stream = ?').run(stream);
        if (ctx.stmt('SELECT 1 FROM streams WHERE stream = ?').get(stream) === undefined) return;
        for (const s of snapshots) ctx.stmt('INSERT OR REPLACE INTO fold_snapshots (stream, seq, snapshot) VALUES (?, ?, ?)').run(stream, s.seq, encodeSnapshot(s));
      })
      .immediate();
  } catch {
    // a cache: a failed write keeps nothing
  }
};

/**
 * Adds `snapshots` past the last one kept for `stream` (one immediate transaction): one row each whose seq is above
 * the stream's last row; the other rows are neither read nor written. Best effort, as {@link saveSnapshots}. Answers
 * the seq of the stream's last row after it (-1: none, or nothing could be written).
 */
export const appendSnapshots = (ctx: SqliteContext, stream: string, snapshots: readonly FoldSnapshot[]): number => {
  if (ctx.readOnly || ctx.isClosed()) return -1;
  try {
    return ctx.db
      .transaction((): number => {
        const max = (ctx.stmt('SELECT max(seq) AS seq FROM fold_snapshots WHERE stream = ?').get(stream) as { seq: number | null }).seq;
        let last = max ?? -1;
        if (snapshots.length === 0 || ctx.stmt('SELECT 1 FROM streams WHERE stream = ?').get(stream) === undefined) return last;
        for (const s of snapshots) {
          if (s.seq <= last) continue;
          ctx.stmt('INSERT INTO fold_snapshots (stream, seq, snapshot) VALUES (?, ?, ?)').run(stream, s.seq, encodeSnapshot(s));
          last = s.seq;
        }
        return last;
      })
      .immediate();
  } catch {
    // a cache: a failed write keeps what was there
    return -1;
  }
};
