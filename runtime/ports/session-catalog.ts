import type { EventStore } from './event-store.js';

/**
 * The optional store capability behind session lists: a catalog of the store's streams, maintained with the log,
 * so that listing sessions costs the page asked for, not a read of every event. A store without it stays a
 * complete event store; the host then finds sessions by following the global order (host/catalog.ts).
 *
 * The JSONL store keeps it beside its files (`sessions.catalog`, docs/store-jsonl.md, "The session catalog"); the
 * PostgreSQL store in a table its append function maintains (`session_catalog`, docs/store-postgres.md).
 */
export interface SessionCatalogSource {
  /**
   * A page of the catalog, oldest first (by `createdAt`, then id) or newest first as `query.order` says, filtered by
   * `query`.
   * @throws StoreIoError when the store cannot be read; never for a damaged stream (its row says `broken`)
   */
  listSessions(query?: SessionCatalogQuery): Promise<SessionCatalogPage>;
}

/** What the catalog knows of a stream at the end of its log. */
export interface CatalogedSession {
  readonly sessionId: string;
  /** `session/created`'s `createdAt` when the stream starts with one, else the time of its first event. */
  readonly createdAt: number;
  /** `session/created`'s `kind`; null when the stream does not start with `session/created` (not a session). */
  readonly kind: string | null;
  /** `session/created`'s `parentSession`, when it names one. */
  readonly parentSession?: string;
  /** The last event's seq (stream revision). */
  readonly lastSeq: number;
  /** The last event's time (ms since the epoch). */
  readonly lastActivity: number;
  /**
   * `open-turn` when the last `turn/start` has no `turn/end` after it, `idle` otherwise, `broken` when a line of the
   * stream could not be read while the catalog was folded (the other fields then say what was read before it).
   */
  readonly status: 'idle' | 'open-turn' | 'broken';
  /** The last event's chain hash (`hash`), null when it carries none. */
  readonly chainHead: string | null;
  /** Why the stream is `broken` (file, byte, what disagrees). */
  readonly brokenReason?: string;
}

/** Filters and paging of {@link SessionCatalogSource.listSessions}. Every filter is optional. */
export interface SessionCatalogQuery {
  /**
   * The `next` cursor of the previous page (asked in the same `order`): the page resumes after that row in that order.
   * @defaultValue from the first row of the order (the oldest, or the newest)
   */
  readonly after?: string;
  /**
   * `oldest` pages by `createdAt`, then id, ascending; `newest` the reverse (`createdAt`, then id, descending), so a
   * first page holds the most recently created sessions.
   * @defaultValue 'oldest'
   */
  readonly order?: CatalogOrder;
  /** The most rows in a page. @defaultValue every row */
  readonly limit?: number;
  /** Only sessions of this kind (streams that are not sessions have none). */
  readonly kind?: string;
  /** Only forks of this session. */
  readonly parentSession?: string;
  /** Only rows with this status. */
  readonly status?: CatalogedSession['status'];
  /** Only sessions with an event at or after this time (ms since the epoch). */
  readonly activeSince?: number;
  /** Only streams that start with `session/created` (and broken ones, which may). @defaultValue false */
  readonly sessionsOnly?: boolean;
}

/** The orders a catalog pages in: {@link compareCatalogRows} ascending (`oldest`) or descending (`newest`). */
export type CatalogOrder = 'oldest' | 'newest';

/** One page of the catalog and the cursor of the next (null after the last). */
export interface SessionCatalogPage {
  readonly sessions: readonly CatalogedSession[];
  readonly next: string | null;
}

/** Does this store keep a {@link SessionCatalogSource}? */
export const hasSessionCatalog = (store: EventStore): store is EventStore & SessionCatalogSource =>
  typeof (store as Partial<SessionCatalogSource>).listSessions === 'function';

/** The order of catalog rows: by `createdAt`, then id. */
export const compareCatalogRows = (a: CatalogedSession, b: CatalogedSession): number =>
  a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0);

/** The comparison of catalog rows in `order`: {@link compareCatalogRows}, reversed for `newest`. */
export const catalogRowComparison = (order: CatalogOrder = 'oldest'): ((a: CatalogedSession, b: CatalogedSession) => number) =>
  order === 'newest' ? (a, b) => compareCatalogRows(b, a) : compareCatalogRows;

/** The cursor that resumes after `row` (in the order of the page it ends). */
export const catalogCursorOf = (row: Pick<CatalogedSession, 'createdAt' | 'sessionId'>): string => `${row.createdAt}:${row.sessionId}`;

/** The row a cursor of {@link catalogCursorOf} resumes after; undefined when it is not one (a page then starts from the oldest). */
export const catalogCursorRow = (cursor: string): Pick<CatalogedSession, 'createdAt' | 'sessionId'> | undefined => {
  const colon = cursor.indexOf(':');
  const createdAt = Number(cursor.slice(0, colon));
  if (colon < 0 || !Number.isFinite(createdAt)) return undefined;
  return { createdAt, sessionId: cursor.slice(colon + 1) };
};

const rowAfterCursor = (cursor: string, compare: (a: CatalogedSession, b: CatalogedSession) => number): ((row: CatalogedSession) => boolean) => {
  const after = catalogCursorRow(cursor);
  if (after === undefined) return () => true;
  return (row) => compare(row, after as CatalogedSession) > 0;
};

/** Does `row` pass the filters of `query` (paging aside)? */
export const matchesCatalogQuery = (row: CatalogedSession, query: SessionCatalogQuery): boolean =>
  (query.kind === undefined || row.kind === query.kind) &&
  (query.parentSession === undefined || row.parentSession === query.parentSession) &&
  (query.status === undefined || row.status === query.status) &&
  (query.activeSince === undefined || row.lastActivity >= query.activeSince) &&
  (query.sessionsOnly !== true || row.kind !== null || row.status === 'broken');

/**
 * A page of `rows` (any order) as `query` asks: filtered, sorted in `query.order`, after the cursor in that order, at
 * most `limit`. The reference paging every catalog source answers as (the stores' tests hold them to it).
 */
export const catalogPageOf = (rows: Iterable<CatalogedSession>, query: SessionCatalogQuery = {}): SessionCatalogPage => {
  const compare = catalogRowComparison(query.order);
  const after = query.after === undefined ? () => true : rowAfterCursor(query.after, compare);
  const matching: CatalogedSession[] = [];
  for (const row of rows) if (matchesCatalogQuery(row, query) && after(row)) matching.push(row);
  matching.sort(compare);
  const limit = Math.max(1, query.limit ?? Number.POSITIVE_INFINITY);
  const sessions = matching.length > limit ? matching.slice(0, limit) : matching;
  return { sessions, next: matching.length > limit ? catalogCursorOf(sessions.at(-1)!) : null };
};
