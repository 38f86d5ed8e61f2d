/**
 * Real `$all` (protocol fake): positions are byte offsets far from 0 (commit ≥ 2^40), packed positions exceed
 * 64 bits, servers before 22.6 give stream-read events the maximum value instead of a position, and `$all` needs
 * admin rights. End to end: a projection over `$all` on EventStoreDB keeps its checkpoints in PostgreSQL and
 * resumes from them.
 */
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../../adapters/checkpoints/index.js';
import { PostgresCheckpointStore } from '../../../../adapters/checkpoints/postgres-checkpoint-store.js';
import { DEFAULT_STREAM_PREFIX, openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import { defineProjection, runProjection } from '../../../../projections/index.js';
import type { NewEvent, SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { isStoreAccessDeniedError } from '../../../../runtime/ports/store-errors.js';
import { collect, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { PG_URL } from '../postgres/pg-test-support.js';
import { FakeEsdb } from './fake/esdb-fake.js';

const tick = (): NewEvent => ({ id: randomUUID(), type: 'test/tick', time: 1, data: {}, ignorable: true });

const fakes: FakeEsdb[] = [];
const stores: EventStoreDbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const f of fakes.splice(0)) await f.stop();
});
const setup = async (options: Partial<ConstructorParameters<typeof FakeEsdb>[0]> = {}) => {
  const fake = new FakeEsdb({ features: 'batch-append', ...options });
  await fake.start();
  fakes.push(fake);
  const store = openEventStoreDbStore({ connectionString: fake.connectionString });
  stores.push(store);
  return { fake, store };
};

describe('eventstoredb $all — protocol fake', () => {
  it('positions are packed (commit · 2^64 + prepare) from commit positions ≥ 2^40, and strictly increase', async () => {
    const { store } = await setup();
    const s = uniqueStream();
    await store.append(s, [tick(), tick(), tick()], 'no_stream');
    const all = await collect(() => store.readAll());
    expect(all[0]!.position >= (1n << 40n) << 64n).toBe(true);
    for (let i = 1; i < all.length; i++) expect(all[i]!.position > all[i - 1]!.position).toBe(true);
    // readAll after a packed position resumes exactly after it
    expect((await collect(() => store.readAll({ after: all[0]!.position }))).map((e) => e.id)).toEqual(all.slice(1).map((e) => e.id));
  });

  it('an old transactional write (commit > prepare): packed positions keep $all order, and reading after one inside it resumes exactly', async () => {
    const { fake, store } = await setup();
    const s = uniqueStream();
    await store.append(s, [tick()], 'no_stream');
    const ids = fake.writeTransaction(DEFAULT_STREAM_PREFIX + s, 3);
    await store.append(s, [tick()], 3n);
    const all = await collect(() => store.readAll());
    const tx = all.filter((e) => ids.includes(e.id));
    expect(tx).toHaveLength(3);
    const commit = (p: bigint): bigint => p >> 64n;
    const prepare = (p: bigint): bigint => p & ((1n << 64n) - 1n);
    for (const e of tx) expect(commit(e.position) > prepare(e.position)).toBe(true);
    expect(new Set(tx.map((e) => commit(e.position))).size).toBe(1);
    for (let i = 1; i < all.length; i++) expect(all[i]!.position > all[i - 1]!.position).toBe(true);
    expect((await collect(() => store.readAll({ after: tx[1]!.position }))).map((e) => e.id)).toEqual(all.slice(3).map((e) => e.id));
    const ac = new AbortController();
    const it = store.subscribeAll({ after: tx[0]!.position, signal: ac.signal })[Symbol.asyncIterator]();
    const next = (await it.next()).value as SubscriptionMessage;
    expect(next.kind === 'event' && next.event.id).toBe(tx[1]!.id);
    ac.abort();
    await it.return?.();
  });

  it('21.10 profile: stream reads carry the maximum value, reported as position -1 (unknown); $all keeps real positions', async () => {
    const { store } = await setup({ profile: '21.10' });
    const s = uniqueStream();
    await store.append(s, [tick()], 'no_stream');
    expect((await collect(() => store.read(s)))[0]!.position).toBe(-1n);
    expect((await collect(() => store.readAll()))[0]!.position > 0n).toBe(true);
  });

  it('reading $all without admin rights fails with the typed access-denied error and a hint', async () => {
    const { store } = await setup({ denyAllReads: true });
    const e = await rejection(() => collect(() => store.readAll()));
    expect(isStoreAccessDeniedError(e)).toBe(true);
    expect((e as Error).message).toContain('$admins');
    const sub = await rejection(async () => {
      for await (const m of store.subscribeAll()) void m;
    });
    expect(isStoreAccessDeniedError(sub)).toBe(true);
  });

  it("readAll, subscribeAll and a projection over $all see only steerlog's streams among system, link, metadata, tombstone and foreign events", async () => {
    const { fake, store } = await setup();
    const s = uniqueStream();
    const mine = [tick(), tick()];
    await store.append(s, [mine[0]!], 'no_stream');
    fake.seedForeignEvents(DEFAULT_STREAM_PREFIX + s);
    await store.append(s, [mine[1]!], 0n);
    fake.seedForeignEvents(DEFAULT_STREAM_PREFIX + s); // foreign events after the last visible one, too
    const ids = mine.map((e) => e.id);
    expect((await collect(() => store.readAll())).map((e) => [e.stream, e.id])).toEqual(ids.map((id) => [s, id]));
    const ac = new AbortController();
    const it = store.subscribeAll({ signal: ac.signal })[Symbol.asyncIterator]();
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = (await it.next()).value as SubscriptionMessage;
      got.push(m.kind === 'event' ? m.event.id : 'caught-up');
    }
    expect(got).toEqual([...ids, 'caught-up']);
    ac.abort();
    await it.return?.();
    const projection = defineProjection<{ n: number }>({ name: 'count', version: 1, initialState: { n: 0 }, evolve: (st) => ({ n: st.n + 1 }) });
    const run = runProjection(projection, { store, checkpoints: new MemoryCheckpointStore() });
    await run.caughtUp; // a foreign event reaching the fold would fail the run
    expect(run.state().n).toBe(2);
    await run.stop();
  });

  it('end to end: a projection over $all with PostgreSQL checkpoints resumes from a packed position, each event once', async () => {
    const { store } = await setup();
    const schema = `steerlog_e2e_${process.pid}_${Date.now().toString(36)}`;
    const checkpoints = new PostgresCheckpointStore({ connection: PG_URL, schema });
    const projection = defineProjection<{ ids: string[] }>({ name: 'all-ids', version: 1, initialState: { ids: [] }, evolve: (st, e) => ({ ids: [...st.ids, e.event.id] }) });
    try {
      const s = uniqueStream();
      const first = [tick(), tick(), tick()];
      await store.append(s, first, 'no_stream');
      const run1 = runProjection(projection, { store, checkpoints, batchSize: 1 });
      await run1.caughtUp;
      await run1.stop();
      const saved = await checkpoints.load(projection);
      expect(saved!.position > 2n ** 104n).toBe(true); // beyond what numeric(20, 0) could keep
      const second = [tick(), tick()];
      await store.append(s, second, 2n);
      const run2 = runProjection(projection, { store, checkpoints, batchSize: 1 });
      await run2.caughtUp;
      expect(run2.state().ids).toEqual([...first, ...second].map((e) => e.id));
      await run2.stop();
    } finally {
      await checkpoints.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});
