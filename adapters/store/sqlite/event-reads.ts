/**
 * The SQLite store's reads: a stream by revision range on the primary key (stream, revision), the global order by
 * its unique index on position, each in keyset pages (one query a page), and a stream's last revision.
 */
import {
  globalPosition,
  streamRevision,
  type ReadAllPagesOptions,
  type ReadPagesOptions,
  type RecordedEvent,
  type StreamRevision,
} from '../../../runtime/ports/event-store.js';
import { pageSizeOf } from '../../../runtime/ports/paged-reads.js';
import { keepsEveryStream } from '../../../runtime/ports/stream-partition.js';
import { assertValidStreamId } from '../../../runtime/ports/store-validation.js';
import { deepFreeze } from '../../../domain/json.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

/** A row of the events table as the read statements select it. */
export interface EventRow {
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly id: string;
  readonly type: string;
  readonly time: number;
  readonly data: string;
  readonly ignorable: number;
  readonly metadata: string | null;
  readonly hash: string | null;
}

const COLUMNS = 'stream, revision, position, id, type, time, data, ignorable, metadata, hash';
const SQL = {
  forwards: `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
  backwards: `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`,
  all: `SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
  allPartitions: `SELECT ${COLUMNS} FROM events WHERE position > ? AND stream_hash % ? IN (SELECT value FROM json_each(?)) ORDER BY position LIMIT ?`,
  revision: 'SELECT revision FROM streams WHERE stream = ?',
} as const;

/** A row back into a frozen RecordedEvent. */
const toRecorded = (row: EventRow): RecordedEvent =>
  deepFreeze({
    stream: row.stream,
    revision: streamRevision(row.revision),
    position: globalPosition(row.position),
    id: row.id,
    type: row.type,
    time: row.time,
    data: JSON.parse(row.data) as unknown,
    ...(row.ignorable === 1 ? { ignorable: true as const } : {}),
    ...(row.metadata !== null ? { metadata: JSON.parse(row.metadata) as Record<string, unknown> } : {}),
    ...(row.hash !== null ? { hash: row.hash } : {}),
  });

/** SQLite integers are 64-bit; revisions and positions beyond 2^53 do not occur in one file. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const clamp = (n: bigint): number => Number(n > MAX_SAFE ? MAX_SAFE : n < -1n ? -1n : n);

/**
 * The driver is synchronous, and an async generator that awaits nothing else runs all of its pages in microtasks:
 * a long read would hold the event loop (no request, no timer) until its end. Every page after the first waits for
 * the loop's next turn first.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One page of rows, on the open store. */
const page = (ctx: SqliteContext, sql: string, params: readonly unknown[]): RecordedEvent[] =>
  onOpenStore(ctx, () => (ctx.stmt(sql).all(...params) as EventRow[]).map(toRecorded));

/** `read` a page at a time: keyset pages of at most `pageSize` rows on the primary key, one query each. */
export async function* readStreamPages(ctx: SqliteContext, stream: string, options: ReadPagesOptions): AsyncGenerator<readonly RecordedEvent[]> {
  onOpenStore(ctx, () => assertValidStreamId(stream));
  const pageSize = pageSizeOf(options, ctx.pageSize);
  let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
  const forwards = (options.direction ?? 'forwards') === 'forwards';
  let cursor = clamp(forwards ? (options.from ?? 0n) : (options.from ?? MAX_SAFE));
  if (cursor < 0) cursor = forwards ? 0 : -1;
  for (let first = true; remaining > 0 && cursor >= 0; first = false) {
    if (!first) await nextTurn();
    const limit = Math.min(pageSize, remaining);
    const rows = page(ctx, forwards ? SQL.forwards : SQL.backwards, [stream, cursor, limit]);
    if (rows.length > 0) yield rows;
    remaining -= rows.length;
    if (rows.length < limit) return;
    const last = Number(rows.at(-1)!.revision);
    cursor = forwards ? last + 1 : last - 1;
  }
}

/**
 * `readAll` a page at a time: keyset pages on the position index, one query each. With `partition`, only the rows
 * whose stream hash falls in a kept partition (filtered in the query: the others are not decoded).
 */
export async function* readAllPages(ctx: SqliteContext, options: ReadAllPagesOptions): AsyncGenerator<readonly RecordedEvent[]> {
  onOpenStore(ctx, () => undefined);
  const pageSize = pageSizeOf(options, ctx.pageSize);
  let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
  let cursor = clamp(options.after ?? -1n);
  const filter = keepsEveryStream(options.partition) ? undefined : options.partition;
  if (filter !== undefined && filter.keep.length === 0) return;
  const kept = filter === undefined ? '' : JSON.stringify([...new Set(filter.keep)]);
  for (let first = true; remaining > 0; first = false) {
    if (!first) await nextTurn();
    const limit = Math.min(pageSize, remaining);
    const rows = filter === undefined ? page(ctx, SQL.all, [cursor, limit]) : page(ctx, SQL.allPartitions, [cursor, filter.count, kept, limit]);
    if (rows.length > 0) yield rows;
    remaining -= rows.length;
    if (rows.length < limit) return;
    cursor = Number(rows.at(-1)!.position);
  }
}

/** The store's `revision()`: the stream's last revision, `no_stream` when it has no event. */
export const revisionOf = (ctx: SqliteContext, stream: string): StreamRevision | 'no_stream' =>
  onOpenStore(ctx, () => {
    assertValidStreamId(stream);
    const row = ctx.stmt(SQL.revision).get(stream) as { revision: number } | undefined;
    return row === undefined ? 'no_stream' : streamRevision(row.revision);
  });
