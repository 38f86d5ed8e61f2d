/**
 * The PostgreSQL store's session catalog (SessionCatalogSource): a page of `session_catalog` (migration 6, kept by
 * `append_events` in the append's transaction), filtered and ordered by the server, and its rebuild.
 */
import type { CatalogedSession, SessionCatalogPage, SessionCatalogQuery } from '../../../runtime/ports/session-catalog.js';
import { catalogCursorOf, catalogCursorRow } from '../../../runtime/ports/session-catalog.js';
import { RAW_TYPES } from './statements.js';
import { assertOpen, storeFailure, type StoreContext } from './store-context.js';

interface CatalogRowText {
  readonly stream: string;
  readonly created_at: string;
  readonly kind: string | null;
  readonly parent: string | null;
  readonly last_seq: string;
  readonly last_activity: string;
  readonly open_turn: boolean | string;
  readonly chain_head: string | null;
}

const rowOf = (r: CatalogRowText): CatalogedSession => ({
  sessionId: r.stream,
  createdAt: Number(r.created_at),
  kind: r.kind,
  ...(r.parent !== null ? { parentSession: r.parent } : {}),
  lastSeq: Number(r.last_seq),
  lastActivity: Number(r.last_activity),
  status: r.open_turn === true || r.open_turn === 't' ? 'open-turn' : 'idle',
  chainHead: r.chain_head,
});

/**
 * A page of the catalog, oldest first (by `createdAt`, then id in code-unit order for the ids steerlog writes), or
 * newest first for `order: 'newest'` (the same index, `session_catalog_order`, scanned backward), filtered as `query`
 * says: one indexed query of at most `limit + 1` rows. No row is ever `broken` here (the
 * database refuses damage at write time), so a `status: 'broken'` filter answers an empty page.
 */
export async function listCatalog(ctx: StoreContext, query: SessionCatalogQuery = {}): Promise<SessionCatalogPage> {
  assertOpen(ctx);
  if (query.status === 'broken') return { sessions: [], next: null };
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (v: unknown): string => {
    values.push(v);
    return `$${values.length}`;
  };
  if (query.kind !== undefined) where.push(`kind = ${param(query.kind)}`);
  if (query.parentSession !== undefined) where.push(`parent = ${param(query.parentSession)}`);
  if (query.status !== undefined) where.push(`open_turn = ${param(query.status === 'open-turn')}::boolean`);
  if (query.activeSince !== undefined) where.push(`last_activity >= ${param(query.activeSince)}::float8`);
  if (query.sessionsOnly === true) where.push('kind IS NOT NULL');
  const after = query.after === undefined ? undefined : catalogCursorRow(query.after);
  const newest = query.order === 'newest';
  if (after) where.push(`(created_at, stream COLLATE "C") ${newest ? '<' : '>'} (${param(after.createdAt)}::float8, ${param(after.sessionId)}::text COLLATE "C")`);
  const limit = query.limit === undefined ? undefined : Math.max(1, Math.floor(query.limit));
  const sql = `SELECT stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head FROM ${ctx.sql.sessionCatalog}
    ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY ${newest ? 'created_at DESC, stream COLLATE "C" DESC' : 'created_at, stream COLLATE "C"'}${limit === undefined ? '' : ` LIMIT ${param(limit + 1)}::bigint`}`;
  let rows: CatalogRowText[];
  try {
    rows = (await ctx.pool.query<CatalogRowText>({ text: sql, values, types: RAW_TYPES })).rows;
  } catch (e) {
    throw storeFailure(ctx, e);
  }
  const more = limit !== undefined && rows.length > limit;
  const sessions = (more ? rows.slice(0, limit) : rows).map(rowOf);
  return { sessions, next: more ? catalogCursorOf(sessions.at(-1)!) : null };
}

/**
 * Folds `session_catalog` again from the events (`rebuild_session_catalog()`: appends wait meanwhile), and says how
 * many rows it holds: the store's repair path (`steerlog store repair postgres://…`).
 */
export async function rebuildCatalog(ctx: StoreContext): Promise<number> {
  assertOpen(ctx);
  try {
    const r = await ctx.pool.query<{ n: string }>({ text: ctx.sql.rebuildCatalog, types: RAW_TYPES });
    return Number(r.rows[0]!.n);
  } catch (e) {
    throw storeFailure(ctx, e);
  }
}
