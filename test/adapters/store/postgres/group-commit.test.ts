/**
 * The PostgreSQL store's group commit: appends issued together go to the database in one statement (one transaction:
 * their rows share `recorded_at`, the transaction's start time), each keeps its own concurrency check and outcome,
 * the appends of one stream keep their order, and the global positions follow the order of the calls. The property
 * test holds the grouped store to the memory store fed the same appends one after the other.
 */
import fc from 'fast-check';
import pg from 'pg';
import { expect, it } from 'vitest';
import { MemoryEventStore } from '../../../../adapters/store/memory/memory-event-store.js';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { streamRevision, type AppendResult, type ExpectedRevision, type NewEvent } from '../../../../runtime/ports/event-store.js';
import {
  isConcurrencyError,
  isDuplicateEventIdError,
  isStreamDeletedError,
  type ConcurrencyError,
} from '../../../../runtime/ports/store-errors.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { describePg, schemaFixture } from './pg-test-support.js';

describePg('PostgreSQL store: group commit', () => {
  const fx = schemaFixture('group', (schema) => openPostgresEventStore({ connectionString: process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test', schema, poolSize: 4 }));
  const store = (): PostgresEventStore => fx.opened;
  const q = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> => (await fx.client.query<R>(sql, values)).rows;
  const counter = async (): Promise<bigint> => BigInt((await q<{ last: string }>(`SELECT last::text FROM "${fx.schema}".global_position`))[0]!.last);
  /** How many transactions wrote the events of these streams (one start time per transaction). */
  const transactionsOf = async (streams: readonly string[]): Promise<number> =>
    Number((await q<{ n: string }>(`SELECT count(DISTINCT recorded_at)::text AS n FROM "${fx.schema}".events WHERE stream = ANY ($1::text[])`, [streams]))[0]!.n);

  it('40 streams appended to at once: one transaction; the one stale expected revision is refused alone, the others committed once', async () => {
    const streams = Array.from({ length: 40 }, (_, i) => `many-${i}`);
    await Promise.all(streams.map((s) => store().append(s, [ev(`${s}-0`)], 'no_stream')));
    const before = await counter();
    const stale = 17;
    const results = await Promise.allSettled(streams.map((s, i) => store().append(s, [ev(`${s}-1`), ev(`${s}-2`)], i === stale ? streamRevision(5) : streamRevision(0))));
    const refused = results.flatMap((r, i) => (r.status === 'rejected' ? [[i, r.reason] as const] : []));
    expect(refused.map(([i]) => i)).toEqual([stale]);
    expect(isConcurrencyError(refused[0]![1])).toBe(true);
    expect((refused[0]![1] as ConcurrencyError).actual).toBe(0n);
    // The others: committed, each once, in one transaction; positions in the order of the calls, contiguous.
    const committed = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(committed.map((r) => r.nextExpectedRevision)).toEqual(committed.map(() => 2n));
    expect(committed.map((r) => r.position)).toEqual(committed.map((_, k) => before + 2n * BigInt(k + 1)));
    expect(await counter()).toBe(before + 2n * 39n);
    const written = streams.filter((_, i) => i !== stale);
    const rows = await q<{ stream: string; n: string; at: string }>(
      `SELECT stream, count(*)::text AS n, count(DISTINCT recorded_at)::text AS at FROM "${fx.schema}".events WHERE stream = ANY ($1::text[]) AND revision > 0 GROUP BY stream ORDER BY stream`,
      [streams],
    );
    expect(rows.map((r) => r.stream).sort()).toEqual([...written].sort());
    expect(rows.every((r) => r.n === '2')).toBe(true);
    const txs = await q<{ n: string }>(`SELECT count(DISTINCT recorded_at)::text AS n FROM "${fx.schema}".events WHERE stream = ANY ($1::text[]) AND revision > 0`, [streams]);
    expect(txs[0]!.n).toBe('1');
    // The refused stream is untouched.
    expect((await collect(() => store().read(streams[stale]!))).map((e) => e.id)).toEqual([`${streams[stale]}-0`]);
  });

  it('every kind of refusal in one group reaches its own append only, with the error a lone append gets', async () => {
    await store().append('k-base', [ev('kb-0'), ev('kb-1')], 'no_stream');
    await store().append('k-gone', [ev('kg-0')], 'no_stream');
    await store().deleteStream('k-gone', streamRevision(0));
    const before = await counter();
    const results = await Promise.allSettled([
      store().append('k-a', [ev('ka-0')], 'no_stream'),
      store().append('k-base', [ev('kb-0'), ev('kb-1')], 'no_stream'), // an exact retry: the original result
      store().append('k-base', [ev('kb-1'), ev('kb-x')], 'any'), // a partial retry: duplicate ids
      store().append('k-gone', [ev('kg-1')], 'any'), // a deleted stream
      store().append('k-b', [ev('kb2-0')], 'stream_exists'), // no stream
      store().append('k-base', [ev('kb-2')], streamRevision(1)),
    ]);
    const [a, retry, partial, gone, absent, next] = results;
    expect(a).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 0n, position: before + 1n } });
    expect(retry.status).toBe('fulfilled');
    expect((retry as PromiseFulfilledResult<AppendResult>).value.nextExpectedRevision).toBe(1n);
    expect(isDuplicateEventIdError((partial as PromiseRejectedResult).reason)).toBe(true);
    expect(isStreamDeletedError((gone as PromiseRejectedResult).reason)).toBe(true);
    expect(isConcurrencyError((absent as PromiseRejectedResult).reason)).toBe(true);
    expect((absent as PromiseRejectedResult).reason).toMatchObject({ actual: 'no_stream' });
    expect(next).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 2n, position: before + 2n } });
    expect(await counter()).toBe(before + 2n);
    expect((await collect(() => store().read('k-base'))).map((e) => e.id)).toEqual(['kb-0', 'kb-1', 'kb-2']);
    expect(await store().revision('k-b')).toBe('no_stream');
    expect(await transactionsOf(['k-a'])).toBe(1);
  });

  it("one stream's appends issued together, each expecting the one before: all land, in order", async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => store().append('ordered', [ev(`o-${i}`)], i === 0 ? 'no_stream' : streamRevision(i - 1))));
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(results.map((_, i) => BigInt(i)));
    expect((await collect(() => store().read('ordered'))).map((e) => e.id)).toEqual(results.map((_, i) => `o-${i}`));
    expect(await transactionsOf(['ordered'])).toBe(1);
  });

  it('a failure that is not a refusal rolls the group back, and each append is then written alone: only its own fails', async () => {
    const s = `"${fx.schema}"`;
    await fx.client.query(`CREATE FUNCTION ${s}.poison() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN IF NEW.stream = 'poisoned' THEN RAISE EXCEPTION 'poisoned stream'; END IF; RETURN NEW; END $fn$`);
    await fx.client.query(`CREATE TRIGGER events_poison BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.poison()`);
    try {
      const results = await Promise.allSettled(['p-1', 'poisoned', 'p-2', 'p-3'].map((stream) => store().append(stream, [ev(`${stream}-e`)], 'no_stream')));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'store-io' });
      for (const stream of ['p-1', 'p-2', 'p-3']) expect((await collect(() => store().read(stream))).map((e) => e.id)).toEqual([`${stream}-e`]);
      expect(await store().revision('poisoned')).toBe('no_stream');
    } finally {
      await fx.client.query(`DROP TRIGGER events_poison ON ${s}.events`);
    }
  });

  it('two stores appending to the same streams in opposite orders, at once, many times: every group commits whole (no deadlock)', async () => {
    const peer = await openPostgresEventStore({ connectionString: process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test', schema: fx.schema, poolSize: 2 });
    try {
      const streams = ['x-1', 'x-2', 'x-3', 'x-4', 'x-5', 'x-6'];
      const before = await counter();
      for (let round = 0; round < 20; round++) {
        await Promise.all([
          ...streams.map((st) => store().append(st, [ev(`a-${round}-${st}`)], 'any')),
          ...[...streams].reverse().map((st) => peer.append(st, [ev(`b-${round}-${st}`)], 'any')),
        ]);
      }
      expect(await counter()).toBe(before + 20n * 12n);
      for (const st of streams) {
        const revisions = (await collect(() => store().read(st))).map((e) => e.revision);
        expect(revisions).toEqual(revisions.map((_, i) => BigInt(i)));
        expect(revisions).toHaveLength(40);
      }
      // One transaction per store and round: a deadlock would have rolled a group back and written its appends one
      // by one (6 more transactions each time).
      expect(await transactionsOf(streams)).toBeLessThanOrEqual(40);
    } finally {
      await peer.close();
    }
  });

  it('maxGroupAppends: 1 writes each append on its own; the option is checked before anything is opened', async () => {
    const url = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
    const alone = await openPostgresEventStore({ connectionString: url, schema: fx.schema, poolSize: 4, maxGroupAppends: 1 });
    try {
      const streams = Array.from({ length: 10 }, (_, i) => `alone-${i}`);
      await Promise.all(streams.map((st) => alone.append(st, [ev(`${st}-e`)], 'no_stream')));
      expect(await transactionsOf(streams)).toBe(10);
    } finally {
      await alone.close();
    }
    const grouped = Array.from({ length: 10 }, (_, i) => `grouped-${i}`);
    await Promise.all(grouped.map((st) => store().append(st, [ev(`${st}-e`)], 'no_stream')));
    expect(await transactionsOf(grouped)).toBe(1);
    for (const bad of [0, 65, 2.5]) {
      await expect(openPostgresEventStore({ connectionString: url, schema: fx.schema, maxGroupAppends: bad })).rejects.toThrow(TypeError);
    }
  });

  it('close() writes the appends called before it', async () => {
    const own = await openPostgresEventStore({ connectionString: process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test', schema: fx.schema, poolSize: 2 });
    const pending = Array.from({ length: 10 }, (_, i) => own.append(`closing-${i}`, [ev(`c-${i}`)], 'no_stream'));
    await own.close();
    expect((await Promise.all(pending)).map((r) => r.nextExpectedRevision)).toEqual(pending.map(() => 0n));
    expect(await store().revision('closing-9')).toBe(0n);
  });

  /** One append of a round: a stream of the run, an expected revision, and new events or a batch an earlier round stored. */
  interface Planned {
    readonly stream: number;
    readonly expected: ExpectedRevision;
    readonly events: number;
    /** Retry the k-th batch stored in earlier rounds (modulo their number) instead, when there is one. */
    readonly retry: number | null;
  }
  const planned: fc.Arbitrary<Planned> = fc.record({
    stream: fc.integer({ min: 0, max: 3 }),
    expected: fc.oneof(
      fc.constantFrom<ExpectedRevision>('any', 'no_stream', 'stream_exists'),
      fc.integer({ min: 0, max: 6 }).map((r) => streamRevision(r)),
    ),
    events: fc.integer({ min: 0, max: 3 }),
    retry: fc.option(fc.nat(), { freq: 5 }),
  });

  it('property: appends issued together answer as the memory store answers the same appends one after the other', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(planned, { minLength: 1, maxLength: 14 }), { minLength: 1, maxLength: 4 }), async (rounds) => {
        const prefix = `prop-${run++}`;
        const model = new MemoryEventStore();
        const stored: { stream: string; events: NewEvent[] }[] = [];
        let fresh = 0;
        const pgBase = await counter();
        for (const round of rounds) {
          const calls = round.map((p) => {
            if (p.retry !== null && stored.length > 0) return { ...stored[p.retry % stored.length]!, expected: p.expected };
            return { stream: `${prefix}-${p.stream}`, events: Array.from({ length: p.events }, () => ev(`${prefix}-e${fresh++}`)), expected: p.expected };
          });
          const got = await Promise.allSettled(calls.map((c) => store().append(c.stream, c.events, c.expected)));
          for (const [i, c] of calls.entries()) {
            let want: PromiseSettledResult<AppendResult>;
            try {
              want = { status: 'fulfilled', value: await model.append(c.stream, c.events, c.expected) };
            } catch (e) {
              want = { status: 'rejected', reason: e };
            }
            const g = got[i]!;
            expect(g.status).toBe(want.status);
            if (want.status === 'fulfilled' && g.status === 'fulfilled') {
              expect(g.value.nextExpectedRevision).toBe(want.value.nextExpectedRevision);
              if (c.events.length > 0) expect(g.value.position - pgBase).toBe(want.value.position + 1n);
              if (c.events.length > 0 && !stored.some((b) => b.events[0]!.id === c.events[0]!.id)) stored.push({ stream: c.stream, events: c.events });
            } else if (want.status === 'rejected' && g.status === 'rejected') {
              expect((g.reason as { code: string }).code).toBe((want.reason as { code: string }).code);
              if (isConcurrencyError(want.reason)) expect((g.reason as ConcurrencyError).actual).toBe(want.reason.actual);
            }
          }
        }
        for (let k = 0; k < 4; k++) {
          const stream = `${prefix}-${k}`;
          const ids = (await collect(() => store().read(stream))).map((e) => [e.id, e.revision]);
          expect(ids).toEqual((await collect(() => model.read(stream))).map((e) => [e.id, e.revision]));
        }
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
