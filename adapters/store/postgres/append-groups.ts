/**
 * The PostgreSQL store's group commit: appends that queue while an append is in flight (and those issued in the same
 * tick) go to the database together, in one `append_events_group` statement — one round trip, one transaction, one
 * commit — whatever streams they touch; a lone append goes the same way, as a group of one (a batch too large for one
 * statement, or an empty one, goes alone through `append_events_indexed`). Each append keeps its own concurrency
 * check and outcome: the SQL function (migration 8) checks each before it writes anything, so a wrong expected
 * revision or a deleted stream leaves that append out and comes back in its row, settled exactly as a lone append's
 * refusal would be; an id already stored fails the whole statement, and the appends are then written alone, in order.
 * One group is in flight at a time, so the appends of one stream reach the database in the order they were called,
 * and the global positions follow that order (see docs/store-postgres.md, "Group commit").
 */
import type { AppendResult } from '../../../runtime/ports/event-store.js';
import { streamHashOf } from '../../../runtime/ports/stream-partition.js';
import { UnknownOutcomeError, isStoreError } from '../../../runtime/ports/store-errors.js';
import { isLostConnection } from './append-outcome.js';
import { refusalRow, settle, writeAlone, type AppendContext, type AppendRow, type PreparedAppend } from './append-events.js';
import { RAW_TYPES, expectedCode } from './statements.js';
import { storeFailure } from './store-context.js';

/** An append waiting for its group, with the promise its caller holds. */
interface Queued {
  readonly append: PreparedAppend;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

/** What `append_events_group` answers per append, as PostgreSQL's text output. */
interface GroupRow {
  /** 'appended', or the SQLSTATE that refused the append (SLC01, SLC03). */
  readonly outcome: string;
  readonly revision: string | null;
  readonly position: string | null;
  /** SLC01: the actual revision; null otherwise. */
  readonly detail: string | null;
}

/**
 * Queues a store's appends and writes them in groups of at most `maxAppends` appends and about `maxStatementBytes`
 * bytes. A batch too large for one statement is written alone (its chunks in one transaction, as without grouping),
 * in its place in the queue.
 */
export class AppendGroups {
  readonly #ctx: AppendContext;
  readonly #maxAppends: number;
  #queue: Queued[] = [];
  #running: Promise<void> | null = null;

  /** @param maxAppends the most appends one statement carries (at least 2; the SQL function opens a subtransaction per append) */
  constructor(ctx: AppendContext, maxAppends: number) {
    this.#ctx = ctx;
    this.#maxAppends = maxAppends;
  }

  /** Queues a checked append; resolves with its result once the group holding it has committed. */
  submit(append: PreparedAppend): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.#queue.push({ append, resolve, reject });
      this.#running ??= this.#drain();
    });
  }

  /** Resolves once every append queued so far has been settled (the store's `close()` waits for it). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    // The appends issued in this tick join the first group.
    await Promise.resolve();
    try {
      while (this.#queue.length > 0) {
        const group = this.#take();
        // a batch too large for one statement, or an empty one, goes alone; any other, even a lone one, as a group
        if (group.length === 1 && !groupable(group[0]!.append)) await this.#alone(group[0]!);
        else await this.#together(group);
      }
    } finally {
      this.#running = null;
    }
  }

  /** The next group: the queue's head alone when it cannot be grouped (large, or empty), else the appends after it up to either limit. */
  #take(): Queued[] {
    const queue = this.#queue;
    let n = 1;
    if (groupable(queue[0]!.append)) {
      let bytes = queue[0]!.append.encoded.bytes;
      while (n < queue.length && n < this.#maxAppends) {
        const next = queue[n]!.append;
        if (!groupable(next) || bytes + next.encoded.bytes > this.#ctx.maxStatementBytes) break;
        bytes += next.encoded.bytes;
        n++;
      }
    }
    return queue.splice(0, n);
  }

  async #alone(item: Queued): Promise<void> {
    try {
      item.resolve(await writeAlone(this.#ctx, item.append));
    } catch (e) {
      item.reject(e);
    }
  }

  async #together(group: readonly Queued[]): Promise<void> {
    const ctx = this.#ctx;
    let rows: readonly GroupRow[];
    try {
      rows = (await ctx.pool.query<GroupRow>({ name: ctx.sql.appendGroupName, text: ctx.sql.appendGroup, values: groupValues(ctx, group), types: RAW_TYPES })).rows;
      if (rows.length !== group.length) throw new Error(`append_events_group answered ${rows.length} rows for ${group.length} appends`);
    } catch (e) {
      if (!isStoreError(e) && isLostConnection(e) && !ctx.isClosed()) {
        // One autocommit statement: if the connection broke after it was sent, the whole group may have committed.
        for (const { append, reject } of group) {
          reject(new UnknownOutcomeError(append.stream, append.events.length, `the PostgreSQL connection broke before the grouped append's answer: ${(e as Error).message}`, { cause: e }));
        }
        return;
      }
      // Anything else (an id already stored among them) rolled the whole group back: each append alone, in order, so a
      // failure reaches only its own.
      for (const item of group) await this.#alone(item);
      return;
    }
    await Promise.all(group.map((item, i) => this.#settle(item, rows[i]!)));
  }

  async #settle(item: Queued, row: GroupRow): Promise<void> {
    const { stream, events, expected } = item.append;
    try {
      const outcome: AppendRow | undefined =
        row.outcome === 'appended'
          ? { outcome: 'appended', revision: row.revision!, position: row.position }
          : await refusalRow(this.#ctx, stream, { code: row.outcome, constraint: row.detail ?? undefined, detail: row.detail ?? undefined }, row);
      if (outcome === undefined) throw new Error(`append_events_group: unexpected outcome ${row.outcome}`);
      item.resolve(await settle(this.#ctx, outcome, stream, events, expected));
    } catch (e) {
      item.reject(storeFailure(this.#ctx, e));
    }
  }
}

/** Whether an append can go in a group: one statement's worth of events, at least one (`append_events_group` refuses an empty append). */
const groupable = (append: PreparedAppend): boolean => append.chunks.length === 1 && append.events.length > 0;

/** The parameters of `append_events_group`: per append its stream, expected revision and event count; the events' columns concatenated; each stream's hash. */
const groupValues = (ctx: AppendContext, group: readonly Queued[]): unknown[] => {
  const streams: string[] = [];
  const hashed: number[] = [];
  const expected: string[] = [];
  const counts: number[] = [];
  const cols = { ids: [] as unknown[], types: [] as unknown[], times: [] as unknown[], data: [] as unknown[], ignorable: [] as unknown[], metadata: [] as unknown[], hashes: [] as unknown[], texts: [] as unknown[], sealed: [] as unknown[] };
  for (const { append } of group) {
    streams.push(append.stream);
    hashed.push(streamHashOf(append.stream));
    expected.push(expectedCode(append.expected));
    const b = append.encoded;
    counts.push(b.ids.length);
    for (let i = 0; i < b.ids.length; i++) {
      cols.ids.push(b.ids[i]);
      cols.types.push(b.types[i]);
      cols.times.push(b.times[i]);
      cols.data.push(b.data[i]);
      cols.ignorable.push(b.ignorable[i]);
      cols.metadata.push(b.metadata[i]);
      cols.hashes.push(b.hashes[i]);
      cols.texts.push(b.texts[i]);
      cols.sealed.push(b.sealed[i]);
    }
  }
  return [streams, expected, counts, cols.ids, cols.types, cols.times, cols.data, cols.ignorable, cols.metadata, cols.hashes, ctx.notify, cols.texts, cols.sealed, hashed];
};
