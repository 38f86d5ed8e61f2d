/**
 * The PostgreSQL store's append path: a batch goes in one autocommit `append_events` statement, or, past
 * `maxStatementBytes`, in several inside one transaction; the outcome is then settled — an exact retry of a stored
 * batch returns the original result, a conflict becomes ConcurrencyError, a broken connection UnknownOutcomeError.
 * Appends that queue while another is in flight go to the database together (append-groups.ts); each is settled
 * here, by the same code, from its own row of the group's answer.
 */
import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
} from '../../../runtime/ports/event-store.js';
import { StreamDeletedError, UnknownOutcomeError, isStoreError } from '../../../runtime/ports/store-errors.js';
import {
  assertValidBatch,
  assertValidExpected,
  assertValidStreamId,
  concurrencyError,
  idempotencyVerdict,
} from '../../../runtime/ports/store-validation.js';
import type { ChangeNotifier } from '../shared/change-notifier.js';
import { isLostConnection } from './append-outcome.js';
import { queryRevision } from './event-reads.js';
import { chunkBySize, encodeBatch, type EncodedBatch } from './row-codec.js';
import { RAW_TYPES, STREAM_DELETED, UNIQUE_VIOLATION, WRONG_EXPECTED_REVISION, actualRevision, type Queryable } from './statements.js';
import { assertOpen, storeFailure, type StoreContext } from './store-context.js';

/** What appends need besides the shared context. */
export interface AppendContext extends StoreContext {
  /** The largest event accepted (the `maxEventBytes` option). */
  readonly maxEventBytes: number;
  /** Past about this many bytes a batch is written in several statements in one transaction (the `maxStatementBytes` option). */
  readonly maxStatementBytes: number;
  /** Whether `append_events` issues a NOTIFY (the `notify` option). */
  readonly notify: boolean;
  /** Told after every append that stored events, to wake this process's subscriptions. */
  readonly notifier: ChangeNotifier;
}

/** An append checked and encoded, ready to be written alone or in a group. */
export interface PreparedAppend {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  readonly encoded: EncodedBatch;
  /** The batch cut by `maxStatementBytes`: one chunk when it fits one statement. */
  readonly chunks: readonly EncodedBatch[];
}

/**
 * Checks an append's input and encodes it (no I/O).
 * @throws the port's typed errors for a closed store, an invalid stream id, expected revision or batch
 */
export function prepareAppend(ctx: AppendContext, stream: string, events: readonly NewEvent[], expected: ExpectedRevision): PreparedAppend {
  assertOpen(ctx);
  assertValidStreamId(stream);
  assertValidExpected(expected);
  assertValidBatch(stream, events, ctx.maxEventBytes);
  const encoded = encodeBatch(events);
  return { stream, events, expected, encoded, chunks: chunkBySize(encoded, ctx.maxStatementBytes) };
}

/** The store's `append()` without grouping: checks the input, then writes the batch in one statement or, if large, one transaction. */
export async function appendEvents(ctx: AppendContext, stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
  return writeAlone(ctx, prepareAppend(ctx, stream, events, expected));
}

/** Writes one prepared append on its own: one statement, or one transaction of several when it is large. */
export async function writeAlone(ctx: AppendContext, append: PreparedAppend): Promise<AppendResult> {
  const { stream, events, expected, encoded, chunks } = append;
  try {
    return chunks.length <= 1
      ? await inOneStatement(ctx, stream, events, encoded, expected)
      : await inOneTransaction(ctx, stream, events, chunks, expected);
  } catch (e) {
    throw storeFailure(ctx, e);
  }
}

/** What one `append_events` call came to: `revision` is the actual one on a conflict, -1 for no stream. */
export interface AppendRow {
  readonly outcome: 'appended' | 'conflict' | 'known';
  readonly revision: string;
  readonly position: string | null;
}

/** The batch as one autocommit statement. */
async function inOneStatement(ctx: AppendContext, stream: string, events: readonly NewEvent[], encoded: EncodedBatch, expected: ExpectedRevision): Promise<AppendResult> {
  let row: AppendRow;
  try {
    row = await callAppend(ctx, ctx.pool, stream, expected, encoded);
  } catch (e) {
    // One autocommit statement: if the connection broke after it was sent, it may have committed.
    if (!isStoreError(e) && isLostConnection(e) && !ctx.isClosed()) {
      throw new UnknownOutcomeError(stream, events.length, `the PostgreSQL connection broke before the append's answer: ${(e as Error).message}`, { cause: e });
    }
    throw e;
  }
  return settle(ctx, row, stream, events, expected);
}

/** The batch's chunks as one statement each, inside one transaction: all or nothing. */
async function inOneTransaction(
  ctx: AppendContext,
  stream: string,
  events: readonly NewEvent[],
  chunks: readonly EncodedBatch[],
  expected: ExpectedRevision,
): Promise<AppendResult> {
  const client = await ctx.pool.connect();
  let open = false;
  try {
    await client.query('BEGIN');
    open = true;
    let exp: ExpectedRevision = expected;
    let last: AppendRow | undefined;
    for (const chunk of chunks) {
      const row = await callAppend(ctx, client, stream, exp, chunk);
      if (row.outcome !== 'appended') {
        await client.query('ROLLBACK');
        open = false;
        // Only the first chunk can conflict (we hold the stream's lock afterwards); 'known' is decided on the whole batch.
        return await settle(ctx, row, stream, events, expected);
      }
      exp = BigInt(row.revision);
      last = row;
    }
    open = false;
    try {
      await client.query('COMMIT');
    } catch (e) {
      // Before COMMIT a broken connection rolls the transaction back; during it, the commit may have happened.
      if (isLostConnection(e) && !ctx.isClosed()) {
        throw new UnknownOutcomeError(stream, events.length, `the PostgreSQL connection broke during COMMIT: ${(e as Error).message}`, { cause: e });
      }
      throw e;
    }
    return settle(ctx, last!, stream, events, expected);
  } catch (e) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/** Runs one `append_events` call; refusals come back as outcomes (the statement, or transaction, then failed). */
async function callAppend(ctx: AppendContext, db: Queryable, stream: string, expected: ExpectedRevision, batch: EncodedBatch): Promise<AppendRow> {
  try {
    const result = await db.query<{ revision: string; position: string }>({
      name: ctx.sql.appendName,
      text: ctx.sql.append,
      values: [stream, String(expected), batch.ids, batch.types, batch.times, batch.data, batch.ignorable, batch.metadata, batch.hashes, ctx.notify, batch.texts, batch.sealed],
      types: RAW_TYPES,
    });
    const row = result.rows[0]!;
    return { outcome: 'appended', revision: row.revision, position: row.position };
  } catch (e) {
    const pgErr = e as { code?: string; constraint?: string; detail?: string };
    const refusal = await refusalRow(ctx, stream, { code: pgErr.code, constraint: pgErr.constraint, detail: pgErr.detail }, e);
    if (refusal) return refusal;
    throw e;
  }
}

/** How `append_events` refused a batch: its SQLSTATE, and the DETAIL or the constraint that says more. */
export interface Refusal {
  readonly code: string | undefined;
  readonly constraint?: string | undefined;
  readonly detail?: string | undefined;
}

/**
 * A refusal of `append_events` as an outcome (the statement, or its block, rolled back): a wrong expected revision as
 * `conflict`, an id already stored as `known`; undefined for any other failure.
 * @throws StreamDeletedError when the stream was deleted
 */
export async function refusalRow(ctx: StoreContext, stream: string, refusal: Refusal, cause: unknown): Promise<AppendRow | undefined> {
  if (refusal.code === WRONG_EXPECTED_REVISION) return { outcome: 'conflict', revision: refusal.detail ?? '-1', position: null };
  if (refusal.code === STREAM_DELETED) throw new StreamDeletedError(stream, { cause });
  if (refusal.code === UNIQUE_VIOLATION && refusal.constraint === 'events_stream_id_key') {
    return { outcome: 'known', revision: '-1', position: null };
  }
  // Backstop: the stream row lock makes these unreachable, but the unique constraints are what the database guarantees.
  if (refusal.code === UNIQUE_VIOLATION && (refusal.constraint === 'events_stream_revision_key' || refusal.constraint === 'streams_pkey')) {
    const actual = await queryRevision(ctx.pool, ctx.sql, stream);
    return { outcome: 'conflict', revision: actual === 'no_stream' ? '-1' : String(actual), position: null };
  }
  return undefined;
}

/** Turns an outcome into the append's result or error (for the whole batch, whatever chunk it came from). */
export async function settle(ctx: AppendContext, row: AppendRow, stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
  switch (row.outcome) {
    case 'appended':
      if (events.length > 0) {
        ctx.notifier.notify();
      }
      return { nextExpectedRevision: streamRevision(BigInt(row.revision)), position: globalPosition(BigInt(row.position!)) };
    case 'conflict': {
      // As in the memory store, an exact retry of a stored batch succeeds whatever the expected revision says.
      const actual = actualRevision(row.revision);
      if (actual !== 'no_stream' && events.length > 0) {
        const retried = await settleKnownIds(ctx, stream, events);
        if (retried) return retried;
      }
      throw concurrencyError(stream, expected, actual);
    }
    case 'known': {
      const retried = await settleKnownIds(ctx, stream, events);
      // Ids never disappear, so a unique violation on them always finds them; appending again re-runs every check.
      return retried ?? inOneStatement(ctx, stream, events, encodeBatch(events), expected);
    }
  }
}

/**
 * Looks the batch's ids up: undefined when none is stored; the original result for an exact retry;
 * DuplicateEventIdError for anything else.
 */
async function settleKnownIds(ctx: StoreContext, stream: string, events: readonly NewEvent[]): Promise<AppendResult | undefined> {
  const result = await ctx.pool.query<{ id: string; revision: string; position: string }>({
    name: ctx.sql.knownName,
    text: ctx.sql.known,
    values: [stream, events.map((e) => e.id)],
    types: RAW_TYPES,
  });
  const stored = new Map(result.rows.map((r) => [r.id, { revision: BigInt(r.revision), position: BigInt(r.position) }]));
  const verdict = idempotencyVerdict(stream, events, (id) => stored.get(id)?.revision);
  if (verdict.kind === 'new') return undefined;
  const last = stored.get(events.at(-1)!.id)!;
  return { nextExpectedRevision: streamRevision(last.revision), position: globalPosition(last.position) };
}
