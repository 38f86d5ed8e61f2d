import type { CatalogedSession } from '../../../runtime/ports/session-catalog.js';

/**
 * The fold behind the JSONL store's session catalog: what one stored event changes in its stream's row. The commit
 * path folds a commit's events into one change per stream (a {@link CatalogChange}), written to the catalog log;
 * readers fold index records they read from the stream files with the same step. Applying a commit's changes
 * therefore gives exactly the row that folding its events one by one gives.
 */

/** A catalog row as the JSONL store keeps it: the port's row and its stream file's hash. */
export interface CatalogRow {
  readonly hash: string;
  readonly row: CatalogedSession;
}

/** The fields of a stored event the catalog reads. */
export interface CatalogEvent {
  readonly rev: number;
  readonly time: number;
  readonly type: string;
  readonly data: unknown;
  readonly hash?: string | undefined;
}

/** What a run of one stream's events changes in its row (fields absent: unchanged). */
export interface CatalogChange {
  readonly stream: string;
  readonly hash: string;
  /** Set when the run holds revision 0. */
  created?: { readonly createdAt: number; readonly kind: string | null; readonly parentSession?: string };
  lastSeq: number;
  lastActivity: number;
  /** Set when the run holds a `turn/start` or `turn/end`: whether a turn is open after it. */
  openTurn?: boolean;
  chainHead: string | null;
}

const createdOf = (e: CatalogEvent): NonNullable<CatalogChange['created']> => {
  const d = e.data as { createdAt?: unknown; kind?: unknown; parentSession?: unknown } | null;
  if (e.type !== 'session/created' || typeof d !== 'object' || d === null) return { createdAt: e.time, kind: null };
  return {
    createdAt: typeof d.createdAt === 'number' && Number.isFinite(d.createdAt) ? d.createdAt : e.time,
    kind: typeof d.kind === 'string' ? d.kind : null,
    ...(typeof d.parentSession === 'string' ? { parentSession: d.parentSession } : {}),
  };
};

/** Folds one event into a change (a new one when `change` is undefined). */
export const stepChange = (change: CatalogChange | undefined, stream: string, hash: string, e: CatalogEvent): CatalogChange => {
  const c: CatalogChange = change ?? { stream, hash, lastSeq: e.rev, lastActivity: e.time, chainHead: null };
  if (e.rev === 0) c.created = createdOf(e);
  c.lastSeq = e.rev;
  c.lastActivity = e.time;
  c.chainHead = typeof e.hash === 'string' ? e.hash : null;
  if (e.type === 'turn/start') c.openTurn = true;
  else if (e.type === 'turn/end') c.openTurn = false;
  return c;
};

/** The row after `change` (a stream the catalog did not know starts from the change alone; a broken row stays broken). */
export const applyChange = (before: CatalogRow | undefined, change: CatalogChange): CatalogRow => {
  const old = before?.row;
  const created = change.created ?? (old ? { createdAt: old.createdAt, kind: old.kind, ...(old.parentSession !== undefined ? { parentSession: old.parentSession } : {}) } : { createdAt: change.lastActivity, kind: null });
  const open = change.openTurn ?? old?.status === 'open-turn';
  const broken = old?.status === 'broken';
  return {
    hash: change.hash,
    row: {
      sessionId: change.stream,
      ...created,
      lastSeq: change.lastSeq,
      lastActivity: change.lastActivity,
      status: broken ? 'broken' : open ? 'open-turn' : 'idle',
      chainHead: change.chainHead,
      ...(broken && old?.brokenReason !== undefined ? { brokenReason: old.brokenReason } : {}),
    },
  };
};

/** The row of a stream a reader found damaged: what it read before, marked broken. */
export const breakRow = (before: CatalogRow | undefined, stream: string, hash: string, reason: string): CatalogRow => ({
  hash,
  row: {
    ...(before?.row ?? { sessionId: stream, createdAt: 0, kind: null, lastSeq: -1, lastActivity: 0, chainHead: null }),
    status: 'broken',
    brokenReason: reason,
  },
});

/** A row as one JSON value in the catalog's files (short keys). */
export const encodeRow = (r: CatalogRow): unknown => {
  const row = r.row;
  return [r.hash, row.sessionId, row.createdAt, row.kind, row.parentSession ?? null, row.lastSeq, row.lastActivity, row.status, row.chainHead, row.brokenReason ?? null];
};

/** The row `encodeRow` wrote; undefined when the value is not one. */
export const decodeRow = (v: unknown): CatalogRow | undefined => {
  if (!Array.isArray(v) || v.length !== 10) return undefined;
  const [hash, sessionId, createdAt, kind, parent, lastSeq, lastActivity, status, chainHead, reason] = v as unknown[];
  if (typeof hash !== 'string' || typeof sessionId !== 'string' || typeof createdAt !== 'number' || (kind !== null && typeof kind !== 'string')) return undefined;
  if ((parent !== null && typeof parent !== 'string') || typeof lastSeq !== 'number' || typeof lastActivity !== 'number') return undefined;
  if ((status !== 'idle' && status !== 'open-turn' && status !== 'broken') || (chainHead !== null && typeof chainHead !== 'string') || (reason !== null && typeof reason !== 'string')) return undefined;
  return {
    hash,
    row: {
      sessionId,
      createdAt,
      kind,
      ...(parent !== null ? { parentSession: parent } : {}),
      lastSeq,
      lastActivity,
      status,
      chainHead,
      ...(reason !== null ? { brokenReason: reason } : {}),
    },
  };
};

/** A change as one JSON value in the catalog log. */
export const encodeChange = (c: CatalogChange): unknown => [
  c.hash,
  c.stream,
  c.created ? [c.created.createdAt, c.created.kind, c.created.parentSession ?? null] : null,
  c.lastSeq,
  c.lastActivity,
  c.openTurn ?? null,
  c.chainHead,
];

/** The change `encodeChange` wrote; undefined when the value is not one. */
export const decodeChange = (v: unknown): CatalogChange | undefined => {
  if (!Array.isArray(v) || v.length !== 7) return undefined;
  const [hash, stream, created, lastSeq, lastActivity, openTurn, chainHead] = v as unknown[];
  if (typeof hash !== 'string' || typeof stream !== 'string' || typeof lastSeq !== 'number' || typeof lastActivity !== 'number') return undefined;
  if ((openTurn !== null && typeof openTurn !== 'boolean') || (chainHead !== null && typeof chainHead !== 'string')) return undefined;
  let c: CatalogChange['created'];
  if (created !== null) {
    if (!Array.isArray(created) || created.length !== 3) return undefined;
    const [createdAt, kind, parent] = created as unknown[];
    if (typeof createdAt !== 'number' || (kind !== null && typeof kind !== 'string') || (parent !== null && typeof parent !== 'string')) return undefined;
    c = { createdAt, kind, ...(parent !== null ? { parentSession: parent } : {}) };
  }
  return { hash, stream, ...(c ? { created: c } : {}), lastSeq, lastActivity, ...(openTurn !== null ? { openTurn } : {}), chainHead };
};
