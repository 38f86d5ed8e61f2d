/**
 * The PostgreSQL store's reads: a stream or the global order in keyset pages (one query a page), and a stream's
 * last revision.
 */
import {
  streamRevision,
  type ReadAllPagesOptions,
  type ReadPagesOptions,
  type RecordedEvent,
  type StreamRevision,
} from '../../../runtime/ports/event-store.js';
import { pageSizeOf } from '../../../runtime/ports/paged-reads.js';
import { keepsEveryStream } from '../../../runtime/ports/stream-partition.js';
import { assertValidStreamId } from '../../../runtime/ports/store-validation.js';
import { toRecorded, type EventRow } from './row-codec.js';
import { RAW_TYPES, type Queryable, type Statements } from './statements.js';
import { assertOpen, storeFailure, type StoreContext } from './store-context.js';

/** What reads need besides the shared context. */
export interface ReadContext extends StoreContext {
  /** Rows per query when the caller names no page size (the `readPageSize` option). */
  readonly pageSize: number;
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/**
 * `read` a page at a time: keyset pages of at most `pageSize` rows (default: the store's `readPageSize` option), one
 * query each, every page starting after the last revision of the one before.
 */
export async function* readStreamPages(ctx: ReadContext, stream: string, options: ReadPagesOptions): AsyncGenerator<readonly RecordedEvent[]> {
  assertOpen(ctx);
  assertValidStreamId(stream);
  const pageSize = pageSizeOf(options, ctx.pageSize);
  let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
  const forwards = (options.direction ?? 'forwards') === 'forwards';
  let cursor = forwards ? (options.from ?? 0n) : (options.from ?? MAX_BIGINT);
  if (forwards && cursor < 0n) cursor = 0n;
  if (!forwards && cursor > MAX_BIGINT) cursor = MAX_BIGINT;
  while (remaining > 0 && cursor >= 0n) {
    const limit = Math.min(pageSize, remaining);
    const rows = await page(ctx, forwards ? ctx.sql.readForwardsName : ctx.sql.readBackwardsName,
      forwards ? ctx.sql.readForwards : ctx.sql.readBackwards, [stream, cursor.toString(), limit]);
    if (rows.length > 0) yield rows.map(toRecorded);
    remaining -= rows.length;
    if (rows.length < limit) return;
    const last = BigInt(rows.at(-1)!.revision);
    cursor = forwards ? last + 1n : last - 1n;
  }
}

/**
 * `readAll` a page at a time: keyset pages of at most `pageSize` rows (default: the store's `readPageSize` option),
 * one query each, every page starting after the last position of the one before. With `partition`, only the rows of
 * the streams of those partitions (the server filters on `stream_hash`).
 */
export async function* readAllPages(ctx: ReadContext, options: ReadAllPagesOptions): AsyncGenerator<readonly RecordedEvent[]> {
  assertOpen(ctx);
  const pageSize = pageSizeOf(options, ctx.pageSize);
  let remaining = options.maxCount ?? Number.POSITIVE_INFINITY;
  let cursor = options.after ?? -1n;
  // the server filters by the rows' stream_hash (migration 5): the other partitions' rows are not sent
  const filter = keepsEveryStream(options.partition) ? undefined : options.partition;
  if (filter !== undefined && filter.keep.length === 0) return;
  // the statement names the partitions left out (see `readAllPartitions`)
  const kept = new Set(filter?.keep ?? []);
  const leftOut = filter === undefined ? [] : Array.from({ length: filter.count }, (_, p) => p).filter((p) => !kept.has(p));
  while (remaining > 0) {
    const limit = Math.min(pageSize, remaining);
    const rows = filter === undefined
      ? await page(ctx, ctx.sql.readAllName, ctx.sql.readAll, [cursor.toString(), limit])
      : await page(ctx, ctx.sql.readAllPartitionsName, ctx.sql.readAllPartitions, [cursor.toString(), limit, filter.count, leftOut]);
    if (rows.length > 0) yield rows.map(toRecorded);
    remaining -= rows.length;
    if (rows.length < limit) return;
    cursor = BigInt(rows.at(-1)!.position);
  }
}

/** One page of rows; checks the store is still open first (a read can outlive `close()`). */
const page = async (ctx: StoreContext, name: string, text: string, values: unknown[]): Promise<EventRow[]> => {
  assertOpen(ctx);
  try {
    return (await ctx.pool.query<EventRow>({ name, text, values, types: RAW_TYPES })).rows;
  } catch (e) {
    throw storeFailure(ctx, e);
  }
};

/** The store's `revision()`: the stream's last revision, `no_stream` when it has no event. */
export async function revisionOf(ctx: StoreContext, stream: string): Promise<StreamRevision | 'no_stream'> {
  assertOpen(ctx);
  assertValidStreamId(stream);
  try {
    return await queryRevision(ctx.pool, ctx.sql, stream);
  } catch (e) {
    throw storeFailure(ctx, e);
  }
}

/** The stream's last revision as `db` sees it (inside its transaction, if any); database failures are not wrapped. */
export const queryRevision = async (db: Queryable, sql: Statements, stream: string): Promise<StreamRevision | 'no_stream'> => {
  const result = await db.query<{ revision: string }>({
    name: sql.revisionName,
    text: sql.revision,
    values: [stream],
    types: RAW_TYPES,
  });
  const row = result.rows[0];
  return row ? streamRevision(BigInt(row.revision)) : 'no_stream';
};
