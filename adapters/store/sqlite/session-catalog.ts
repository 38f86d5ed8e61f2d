/**
 * The SQLite store's session catalog (SessionCatalogSource): a page of `session_catalog` (kept by the append's
 * transaction, append-events.ts) on its (created_at, stream) index, and its rebuild from the events.
 */
import { catalogCursorOf, catalogCursorRow, type CatalogedSession, type SessionCatalogPage, type SessionCatalogQuery } from '../../../runtime/ports/session-catalog.js';
import { catalogFill } from './schema.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

interface CatalogRow {
  readonly stream: string;
  readonly created_at: number;
  readonly kind: string | null;
  readonly parent: string | null;
  readonly last_seq: number;
  readonly last_activity: number;
  readonly open_turn: number;
  readonly chain_head: string | null;
}

const rowOf = (r: CatalogRow): CatalogedSession => ({
  sessionId: r.stream,
  createdAt: r.created_at,
  kind: r.kind,
  ...(r.parent !== null ? { parentSession: r.parent } : {}),
  lastSeq: r.last_seq,
  lastActivity: r.last_activity,
  status: r.open_turn === 1 ? 'open-turn' : 'idle',
  chainHead: r.chain_head,
});

/**
 * A page of the catalog, oldest first (by `createdAt`, then id in byte order) or newest first, filtered as `query`
 * says: one indexed query of at most `limit + 1` rows. No row is ever `broken` (the database refuses damage at write
 * time), so a `status: 'broken'` filter answers an empty page.
 */
export const listCatalog = (ctx: SqliteContext, query: SessionCatalogQuery = {}): SessionCatalogPage =>
  onOpenStore(ctx, () => {
    if (query.status === 'broken') return { sessions: [], next: null };
    const where: string[] = [];
    const values: unknown[] = [];
    if (query.kind !== undefined) where.push('kind = ?') && values.push(query.kind);
    if (query.parentSession !== undefined) where.push('parent = ?') && values.push(query.parentSession);
    if (query.status !== undefined) where.push('open_turn = ?') && values.push(query.status === 'open-turn' ? 1 : 0);
    if (query.activeSince !== undefined) where.push('last_activity >= ?') && values.push(query.activeSince);
    if (query.sessionsOnly === true) where.push('kind IS NOT NULL');
    const after = query.after === undefined ? undefined : catalogCursorRow(query.after);
    const newest = query.order === 'newest';
    if (after) where.push(`(created_at, stream) ${newest ? '<' : '>'} (?, ?)`) && values.push(after.createdAt, after.sessionId);
    const limit = query.limit === undefined ? undefined : Math.max(1, Math.floor(query.limit));
    if (limit !== undefined) values.push(limit + 1);
    const sql = `SELECT stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head FROM session_catalog
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${newest ? 'created_at DESC, stream DESC' : 'created_at, stream'}${limit === undefined ? '' : ' LIMIT ?'}`;
    const rows = ctx.stmt(sql).all(...values) as CatalogRow[];
    const more = limit !== undefined && rows.length > limit;
    const sessions = (more ? rows.slice(0, limit) : rows).map(rowOf);
    return { sessions, next: more ? catalogCursorOf(sessions.at(-1)!) : null };
  });

/** Folds `session_catalog` again from the events in one transaction (appends wait); the number of rows it holds. */
export const rebuildCatalog = (ctx: SqliteContext): number =>
  onOpenStore(ctx, () =>
    ctx.db
      .transaction(() => {
        ctx.db.exec(`DELETE FROM session_catalog; ${catalogFill('')};`);
        return (ctx.stmt('SELECT count(*) AS n FROM session_catalog').get() as { n: number }).n;
      })
      .immediate(),
  );
