/**
 * The SQLite store's append path: one `BEGIN IMMEDIATE` transaction that checks the stream (deleted, ids already
 * stored, expected revision), inserts the batch at the next revisions and global positions, and keeps the stream's
 * session catalog row — all or nothing.
 */
import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
} from '../../../runtime/ports/event-store.js';
import { checkedForm } from '../../../runtime/ports/checked-events.js';
import { InvalidEventError, StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import { streamHashOf } from '../../../runtime/ports/stream-partition.js';
import {
  assertValidBatch,
  assertValidExpected,
  assertValidStreamId,
  concurrencyError,
  expectedRevisionMatches,
  idempotencyVerdict,
} from '../../../runtime/ports/store-validation.js';
import { catalogFill } from './schema.js';
import type { EventRow } from './event-reads.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A batch's rows, encoded before the transaction starts: an event row without the places the append assigns. */
type Row = Omit<EventRow, 'stream' | 'revision' | 'position'>;

/** SQLite text is UTF-8: an id or type with a lone surrogate would come back altered, so it is refused. */
const encode = (events: readonly NewEvent[]): Row[] =>
  events.map((e, i) => {
    for (const [field, value] of [['id', e.id], ['type', e.type]] as const) {
      if (LONE_SURROGATE.test(value)) throw new InvalidEventError(i, `${field} is not valid UTF-16 (lone surrogate)`);
    }
    return {
      id: e.id,
      type: e.type,
      time: e.time,
      data: checkedForm(e)?.dataJson ?? JSON.stringify(e.data),
      ignorable: e.ignorable === true ? 1 : 0,
      metadata: e.metadata === undefined ? null : JSON.stringify(e.metadata),
      hash: e.hash ?? null,
    };
  });

/** What revision 0 says about a session: `session/created`'s `createdAt`, `kind` and `parentSession`. */
const createdOf = (first: NewEvent): { createdAt: number; kind: string | null; parent: string | null } => {
  const d = first.type === 'session/created' && typeof first.data === 'object' && first.data !== null && !Array.isArray(first.data) ? (first.data as Record<string, unknown>) : {};
  return {
    createdAt: typeof d['createdAt'] === 'number' ? d['createdAt'] : first.time,
    kind: typeof d['kind'] === 'string' ? d['kind'] : null,
    parent: typeof d['parentSession'] === 'string' ? d['parentSession'] : null,
  };
};

/** The store's `append()`: checks the input, then writes the batch in one immediate transaction. */
export function appendEvents(ctx: SqliteContext, stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
  try {
    assertValidStreamId(stream);
    assertValidExpected(expected);
    assertValidBatch(stream, events, ctx.maxEventBytes);
    const rows = encode(events);
    const result = onOpenStore(ctx, () => ctx.db.transaction(() => appendInTransaction(ctx, stream, events, rows, expected)).immediate());
    if (result.wrote) ctx.notifier.notify();
    return Promise.resolve(result.result);
  } catch (e) {
    return Promise.reject(e);
  }
}

const SQL = {
  archived: 'SELECT 1 FROM archived_streams WHERE stream = ?',
  revision: 'SELECT revision FROM streams WHERE stream = ?',
  knownId: 'SELECT revision, position FROM events WHERE stream = ? AND id = ?',
  positionAt: 'SELECT position FROM events WHERE stream = ? AND revision = ?',
  upsertStream: 'INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision',
  takePositions: 'UPDATE global_position SET last = last + ? RETURNING last',
  insert: 'INSERT INTO events (stream, revision, position, id, type, time, data, ignorable, metadata, hash, stream_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  insertCatalog: `INSERT OR REPLACE INTO session_catalog (stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  updateCatalog: `UPDATE session_catalog SET last_seq = ?, last_activity = ?, chain_head = ?,
    open_turn = CASE WHEN ? IS NULL THEN open_turn ELSE ? END WHERE stream = ?`,
  refoldCatalog: catalogFill('WHERE st.stream = ?'),
} as const;

/** Inside the transaction: every check, then the rows; `wrote` says whether anything was stored. */
function appendInTransaction(ctx: SqliteContext, stream: string, events: readonly NewEvent[], rows: readonly Row[], expected: ExpectedRevision): { result: AppendResult; wrote: boolean } {
  if (ctx.stmt(SQL.archived).get(stream) !== undefined) throw new StreamDeletedError(stream);
  const known = new Map<string, { revision: number; position: number }>();
  for (const r of rows) {
    const hit = ctx.stmt(SQL.knownId).get(stream, r.id) as { revision: number; position: number } | undefined;
    if (hit) known.set(r.id, hit);
  }
  const verdict = idempotencyVerdict(stream, events, (id) => {
    const hit = known.get(id);
    return hit === undefined ? undefined : BigInt(hit.revision);
  });
  if (verdict.kind === 'already-appended') {
    const last = known.get(rows.at(-1)!.id)!;
    return { result: { nextExpectedRevision: streamRevision(last.revision), position: globalPosition(last.position) }, wrote: false };
  }
  const row = ctx.stmt(SQL.revision).get(stream) as { revision: number } | undefined;
  const actual = row === undefined ? -1 : row.revision;
  if (!expectedRevisionMatches(expected, actual < 0 ? 'no_stream' : streamRevision(actual))) {
    throw concurrencyError(stream, expected, actual < 0 ? 'no_stream' : streamRevision(actual));
  }
  if (rows.length === 0) {
    const at = actual < 0 ? undefined : (ctx.stmt(SQL.positionAt).get(stream, actual) as { position: number } | undefined);
    return { result: { nextExpectedRevision: streamRevision(actual), position: globalPosition(at?.position ?? -1) }, wrote: false };
  }
  const n = rows.length;
  const last = (ctx.stmt(SQL.takePositions).get(n) as { last: number }).last;
  const first = last - n + 1;
  const hash = streamHashOf(stream);
  const insert = ctx.stmt(SQL.insert);
  rows.forEach((r, i) => insert.run(stream, actual + 1 + i, first + i, r.id, r.type, r.time, r.data, r.ignorable, r.metadata, r.hash, hash));
  const revision = actual + n;
  ctx.stmt(SQL.upsertStream).run(stream, revision);
  keepCatalogRow(ctx, stream, events, rows, actual, revision);
  return { result: { nextExpectedRevision: streamRevision(revision), position: globalPosition(last) }, wrote: true };
}

/**
 * The stream's session catalog row after the batch: a new stream's row from its revision 0; an existing one's last
 * seq, activity and chain head moved on, and its open turn set by the batch's last `turn/start`/`turn/end` (none:
 * unchanged). A missing row is folded again from the stream's events.
 */
function keepCatalogRow(ctx: SqliteContext, stream: string, events: readonly NewEvent[], rows: readonly Row[], actual: number, revision: number): void {
  let turn: number | null = null;
  for (let i = events.length - 1; i >= 0 && turn === null; i--) {
    const type = events[i]!.type;
    if (type === 'turn/start') turn = 1;
    else if (type === 'turn/end') turn = 0;
  }
  const tail = rows.at(-1)!;
  if (actual < 0) {
    const created = createdOf(events[0]!);
    ctx.stmt(SQL.insertCatalog).run(stream, created.createdAt, created.kind, created.parent, revision, tail.time, turn ?? 0, tail.hash);
    return;
  }
  const updated = ctx.stmt(SQL.updateCatalog).run(revision, tail.time, tail.hash, turn, turn, stream);
  if (updated.changes === 0) ctx.stmt(SQL.refoldCatalog).run(stream);
}
