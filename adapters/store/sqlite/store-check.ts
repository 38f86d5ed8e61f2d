/**
 * `steerlog store check sqlite:<file>`: SQLite's own `PRAGMA integrity_check`, then the store's tables against each
 * other, every stream's hash chain recomputed, and the session catalog against a fold of the events — on a read-only
 * connection: nothing is written.
 */
import { createSessionVerifier } from '../../../formats/chain/verify-session.js';
import type { ChainedFields } from '../../../domain/event-chain.js';
import { StoreError } from '../../../runtime/ports/store-errors.js';
import type { StoreCheckReport, StoreFinding } from '../jsonl/store-check.js';
import { connectSqlite, isSqliteDriverUnbuiltError, type SqliteDatabase } from './driver.js';
import type { EventRow as StoredRow } from './event-reads.js';
import { SQLITE_SCHEMA_VERSION } from './schema.js';

/** Where a finding of a SQLite store is: `file` names the part (`integrity_check`, a stream, a table), `offset` the seq. */
export type SqliteStoreFinding = StoreFinding;

/** The catalog row a stream's events fold to (the columns of `session_catalog`). */
interface FoldedRow {
  created_at: number;
  kind: string | null;
  parent: string | null;
  last_seq: number;
  last_activity: number;
  open_turn: number;
  chain_head: string | null;
}

/** SQLite's result codes that mean the file itself is damaged (a finding), not that it could not be read. */
const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_VTAB']);
const isDamage = (e: unknown): boolean => typeof (e as { code?: unknown })?.code === 'string' && DAMAGED.has((e as { code: string }).code);

/** The fold of revision 0 the store's catalog keeps: `session/created`'s `createdAt`, `kind`, `parentSession`. */
const createdOf = (type: string, time: number, data: unknown): Pick<FoldedRow, 'created_at' | 'kind' | 'parent'> => {
  const d = type === 'session/created' && typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  return {
    created_at: typeof d['createdAt'] === 'number' ? d['createdAt'] : time,
    kind: typeof d['kind'] === 'string' ? d['kind'] : null,
    parent: typeof d['parentSession'] === 'string' ? d['parentSession'] : null,
  };
};

/** A row of the events table as the check selects it: every column but the position. */
type EventRow = Omit<StoredRow, 'position'>;

/**
 * Verifies a SQLite store file without writing anything, into the report `store check` prints for every store:
 * `PRAGMA integrity_check` (a damaged file is reported, and nothing after it is checked); the schema version; every
 * stream's revisions dense from 0 and its `streams` row equal to its last revision; every stream's hash chain
 * recomputed (`verify`'s verifier: a broken link, an unreadable event, a chain/head that lies); the session catalog
 * equal to a fold of the events, row by row. Collects every finding instead of stopping at the first.
 * `directory` in the report is the file.
 * @throws StoreError `store-io` when the file cannot be opened for reading (missing, permission denied), or its
 *   driver is missing or unbuilt (SqliteDriverUnbuiltError)
 */
export const checkSqliteStore = async (file: string): Promise<StoreCheckReport> => {
  const problems: StoreFinding[] = [];
  const report = (events: number, streams: number): StoreCheckReport => ({ ok: problems.length === 0, directory: file, events, streams, problems, notes: [] });
  let db: SqliteDatabase;
  try {
    db = connectSqlite(file, { readOnly: true, busyTimeoutMs: 5000 });
  } catch (e) {
    if (isSqliteDriverUnbuiltError(e) || e instanceof StoreError) throw e;
    throw new StoreError('store-io', `opening the SQLite store ${file} read-only failed: ${(e as Error).message}`, { cause: e });
  }
  try {
    try {
      const rows = db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[];
      for (const r of rows) if (r.integrity_check !== 'ok') problems.push({ file: 'integrity_check', offset: 0, message: r.integrity_check });
    } catch (e) {
      if (!isDamage(e)) throw e;
      problems.push({ file: 'integrity_check', offset: 0, message: (e as Error).message });
    }
    if (problems.length > 0) return report(0, 0);
    const version = Number(db.pragma('user_version', { simple: true }));
    if (version !== SQLITE_SCHEMA_VERSION) {
      problems.push({ file: 'user_version', offset: 0, message: `schema version ${version}, this steerlog reads version ${SQLITE_SCHEMA_VERSION}${version === 0 ? ' (no steerlog store in this file)' : ''}` });
      return report(0, 0);
    }
    try {
      return checkTables(db, problems, report);
    } catch (e) {
      // integrity_check reads every page, but a value can still be unreadable to a later query
      if (!isDamage(e)) throw e;
      problems.push({ file: 'events', offset: 0, message: (e as Error).message });
      return report(0, 0);
    }
  } catch (e) {
    throw new StoreError('store-io', `checking the SQLite store ${file} failed: ${(e as Error).message}`, { cause: e });
  } finally {
    db.close();
  }
};

/** The tables against each other, the chains, and the catalog against the fold; `report` makes the result. */
const checkTables = (db: SqliteDatabase, problems: StoreFinding[], report: (events: number, streams: number) => StoreCheckReport): StoreCheckReport => {
  const recorded = new Map((db.prepare('SELECT stream, revision FROM streams').all() as { stream: string; revision: number }[]).map((r) => [r.stream, r.revision]));
  const folded = new Map<string, FoldedRow>();
  let events = 0;
  let stream: string | null = null;
  let verifier = createSessionVerifier('');
  let row: FoldedRow | undefined;
  let turn = 0;
  const endStream = (): void => {
    if (stream === null || row === undefined) return;
    row.open_turn = turn;
    folded.set(stream, row);
    const result = verifier.result();
    const b = result.break;
    if (b !== null) {
      const what = b.kind === 'unreadable' ? `unreadable: ${b.reason}` : b.kind === 'head-mismatch' ? 'a chain/head claims a head the chain does not have' : `${b.kind}${'expected' in b ? ` (expected ${String(b.expected)}, found ${String(b.found)})` : ''}`;
      problems.push({ file: `stream ${JSON.stringify(stream)}`, offset: b.seq, message: `the hash chain does not hold at seq ${b.seq}: ${what}` });
    }
    const last = recorded.get(stream);
    if (last !== row.last_seq) problems.push({ file: 'streams', offset: 0, message: `stream ${JSON.stringify(stream)}: the streams table says revision ${last ?? 'none'}, its events end at ${row.last_seq}` });
  };
  const all = db.prepare('SELECT stream, revision, id, type, time, data, ignorable, metadata, hash FROM events ORDER BY stream, revision') as unknown as { iterate(): Iterable<EventRow> };
  for (const e of all.iterate()) {
    events++;
    if (e.stream !== stream) {
      endStream();
      stream = e.stream;
      verifier = createSessionVerifier(stream);
      row = undefined;
      turn = 0;
    }
    let data: unknown;
    let metadata: unknown;
    try {
      data = JSON.parse(e.data);
      metadata = e.metadata === null ? undefined : JSON.parse(e.metadata);
    } catch {
      problems.push({ file: `stream ${JSON.stringify(stream)}`, offset: e.revision, message: `the event at seq ${e.revision} holds data or metadata that is not JSON` });
      data = null;
    }
    const expectedSeq: number = row === undefined ? 0 : row.last_seq + 1;
    if (e.revision !== expectedSeq) problems.push({ file: `stream ${JSON.stringify(stream)}`, offset: e.revision, message: `revision ${e.revision} follows ${expectedSeq - 1}: revisions are not dense from 0` });
    const envelope: Record<string, unknown> = { seq: e.revision, id: e.id, time: e.time, type: e.type, data };
    if (e.ignorable === 1) envelope['ignorable'] = true;
    if (metadata !== undefined) envelope['metadata'] = metadata;
    if (e.hash !== null) envelope['hash'] = e.hash;
    verifier.push(envelope as unknown as ChainedFields);
    row ??= { ...createdOf(e.type, e.time, data), last_seq: -1, last_activity: 0, open_turn: 0, chain_head: null };
    row.last_seq = e.revision;
    row.last_activity = e.time;
    row.chain_head = e.hash;
    if (e.type === 'turn/start') turn = 1;
    else if (e.type === 'turn/end') turn = 0;
  }
  endStream();
  for (const s of recorded.keys()) if (!folded.has(s)) problems.push({ file: 'streams', offset: 0, message: `stream ${JSON.stringify(s)} has a streams row but no events` });
  const position = db.prepare('SELECT (SELECT last FROM global_position) AS last, (SELECT max(position) FROM events) AS max').get() as { last: number; max: number | null };
  if (position.max !== null && position.last < position.max) problems.push({ file: 'global_position', offset: 0, message: `the last position handed out is ${position.last}, an event has position ${position.max}` });
  checkCatalog(db, folded, problems);
  return report(events, folded.size);
};

const COLUMNS = ['created_at', 'kind', 'parent', 'last_seq', 'last_activity', 'open_turn', 'chain_head'] as const;

/** Each `session_catalog` row against the fold: a missing, extra or differing row is a problem. */
const checkCatalog = (db: SqliteDatabase, folded: ReadonlyMap<string, FoldedRow>, problems: StoreFinding[]): void => {
  const rows = new Map((db.prepare(`SELECT stream, ${COLUMNS.join(', ')} FROM session_catalog`).all() as (FoldedRow & { stream: string })[]).map((r) => [r.stream, r]));
  for (const [stream, want] of folded) {
    const have = rows.get(stream);
    if (have === undefined) {
      problems.push({ file: 'session_catalog', offset: 0, message: `stream ${JSON.stringify(stream)} has no catalog row` });
      continue;
    }
    const wrong = COLUMNS.filter((c) => have[c] !== want[c]).map((c) => `${c} ${JSON.stringify(have[c])}, the log says ${JSON.stringify(want[c])}`);
    if (wrong.length > 0) problems.push({ file: 'session_catalog', offset: 0, message: `stream ${JSON.stringify(stream)}: ${wrong.join('; ')}` });
  }
  for (const stream of rows.keys()) if (!folded.has(stream)) problems.push({ file: 'session_catalog', offset: 0, message: `stream ${JSON.stringify(stream)} has a catalog row but no events` });
};
