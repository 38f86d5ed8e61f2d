import { expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { PostgresProjectionStore, type PostgresProjectionTx } from '../../adapters/checkpoints/postgres-projection-store.js';
import { isProjectionFencedError, partitionOf, startProjectionWorker, type ProjectionStore } from '../../projections/index.js';
import type { LogEvent } from '../../domain/events.js';
import { describePg, PG_URL, schemaFixture } from '../adapters/store/postgres/pg-test-support.js';
import { appendChunks, sessionLog, tableTally } from './support/worker-fixtures.js';

/**
 * A worker holding several partitions commits a batch of all of them in one transaction of the PostgreSQL store
 * (`commitPartitions`), fenced as a whole: what makes 8 partitions cost what 1 costs.
 */
describePg('commits of several partitions in one transaction (PostgreSQL)', () => {
  const fx = schemaFixture('i28cp', (schema) => new PostgresProjectionStore({ connection: PG_URL, schema }));

  it('a worker over 8 partitions makes one transaction a batch, as over 1, and its rows equal the fold (each event once)', async () => {
    const { opened: projections, client, schema } = fx;
    const store = new MemoryEventStore();
    const logs = new Map<string, LogEvent[]>(Array.from({ length: 24 }, (_, i) => [`s-${i}`, sessionLog(`s-${i}`, 3)]));
    const longest = Math.max(...[...logs.values()].map((l) => l.length));
    for (let i = 0; i < longest; i += 5) for (const [stream, events] of logs) if (i < events.length) await appendChunks(store, stream, events.slice(i, i + 5), 5);
    const total = [...logs.values()].reduce((n, l) => n + l.length, 0);
    const transactions = new Map<number, number>();
    for (const partitions of [1, 8]) {
      let n = 0;
      const counting = new Proxy(projections, {
        get: (target, prop) => {
          if (prop === 'commit' || prop === 'commitPartitions') {
            const method = Reflect.get(target, prop, target) as (...args: unknown[]) => Promise<void>;
            return (...args: unknown[]) => {
              n++;
              return method.apply(target, args);
            };
          }
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const projection = tableTally(`batches-${partitions}`);
      await startProjectionWorker(projection, { store, projections: counting, owner: 'w', partitions, follow: false, batchSize: 40, maxBatchMs: 60_000 }).done;
      transactions.set(partitions, n);
      const rows = await client.query<{ stream: string; n: number }>(`SELECT stream, n FROM "${schema}".batches_${partitions}_v1_tally`);
      expect(new Map(rows.rows.map((r) => [r.stream, r.n]))).toEqual(new Map([...logs].map(([s, l]) => [s, l.length])));
      const applied = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}".batches_${partitions}_v1_applied`);
      expect(Number(applied.rows[0]!.n)).toBe(total);
      const status = await projections.status(`batches-${partitions}`);
      expect(status).toHaveLength(partitions);
      expect(status.reduce((sum, s) => sum + s.applied, 0n)).toBe(BigInt(total));
    }
    // one transaction per batch of 40 events (and the last, partial one), whatever the partitions: not one per partition
    const batches = Math.ceil(total / 40);
    expect(transactions.get(1)).toBeLessThanOrEqual(batches + 1);
    expect(transactions.get(8)).toBeLessThanOrEqual(batches + 1);
  });

  it('is all or nothing: one partition taken over refuses the whole commit (its writes and the other partitions’ checkpoints and documents too)', async () => {
    const { opened: projections, client, schema } = fx;
    const key = (partition: number) => ({ name: 'together', version: 1, partition, partitions: 4 });
    const tables = await projections.migrate('together', 1, { rows: 'stream text PRIMARY KEY' });
    const a0 = (await projections.acquire(key(0), 'A', 60_000))!;
    const a1 = (await projections.acquire(key(1), 'A', 300))!;
    await projections.commitPartitions([
      { lease: a0, commit: { position: 10n, documents: new Map([['k0', '{"v":1}']]), parked: [], applied: 1 } },
      { lease: a1, commit: { position: 10n, documents: new Map([['k1', '{"v":1}']]), parked: [], applied: 1 } },
    ]);
    await new Promise((r) => setTimeout(r, 500));
    const b1 = (await projections.acquire(key(1), 'B', 60_000))!;
    expect(b1.epoch).toBe(a1.epoch + 1);
    let wrote = false;
    const refused = await projections
      .commitPartitions(
        [
          { lease: a0, commit: { position: 20n, documents: new Map([['k0', '{"v":2}']]), parked: [], applied: 1 } },
          { lease: a1, commit: { position: 20n, documents: new Map([['k1', '{"v":2}']]), parked: [], applied: 1 } },
        ],
        async (tx: PostgresProjectionTx) => {
          wrote = true;
          await tx.query(`INSERT INTO ${tables['rows']} (stream) VALUES ('stale')`);
        },
      )
      .catch((e: unknown) => e);
    expect(isProjectionFencedError(refused)).toBe(true);
    expect((refused as { partition: number }).partition).toBe(1);
    expect(wrote).toBe(false); // refused before the writes run
    expect(await projections.load(a0)).toEqual({ position: 10n, documents: new Map([['k0', '{"v":1}']]) });
    expect(await projections.load(b1)).toEqual({ position: 10n, documents: new Map([['k1', '{"v":1}']]) });
    const rows = await client.query(`SELECT * FROM ${tables['rows']}`);
    expect(rows.rows).toEqual([]);
    // a checkpoint that would move back refuses the whole commit too, after the writes (rolled back)
    const a2 = (await projections.acquire(key(2), 'A', 60_000))!;
    await projections.commitPartitions([
      { lease: a0, commit: { position: 30n, documents: new Map(), parked: [], applied: 1 } },
      { lease: a2, commit: { position: 50n, documents: new Map(), parked: [], applied: 1 } },
    ]);
    const back = await projections
      .commitPartitions(
        [
          { lease: a0, commit: { position: 35n, documents: new Map([['k0', '{"v":3}']]), parked: [], applied: 1 } },
          { lease: a2, commit: { position: 45n, documents: new Map(), parked: [], applied: 1 } },
        ],
        async (tx: PostgresProjectionTx) => {
          await tx.query(`INSERT INTO ${tables['rows']} (stream) VALUES ('back')`);
        },
      )
      .catch((e: unknown) => e);
    expect(isProjectionFencedError(back)).toBe(true);
    expect((back as { partition: number }).partition).toBe(2);
    expect(await projections.load(a0)).toEqual({ position: 30n, documents: new Map([['k0', '{"v":1}']]) });
    expect((await projections.load(a2)).position).toBe(50n);
    expect((await client.query(`SELECT * FROM ${tables['rows']}`)).rows).toEqual([]);
    // one partition twice is not one commit
    const twice = await projections
      .commitPartitions([
        { lease: a0, commit: { position: 40n, documents: new Map(), parked: [], applied: 0 } },
        { lease: a0, commit: { position: 41n, documents: new Map(), parked: [], applied: 0 } },
      ])
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(TypeError);
    expect((await projections.load(a0)).position).toBe(30n);
  });

  it('events parked inside the commit go to the partition of their stream', async () => {
    const { opened: projections, client, schema } = fx;
    const store = new MemoryEventStore();
    const logs = new Map<string, LogEvent[]>(Array.from({ length: 6 }, (_, i) => [`s-${i}`, sessionLog(`s-${i}`, 2)]));
    for (const [stream, events] of logs) await appendChunks(store, stream, events, 5);
    const fail = (e: { stream: string; event: { seq: number } }): boolean => (e.stream === 's-1' || e.stream === 's-4') && e.event.seq === 2;
    const w = startProjectionWorker(tableTally('parks', 1, fail), { store, projections: projections as ProjectionStore<PostgresProjectionTx>, owner: 'p', partitions: 4, follow: false, failure: 'park', batchSize: 1000 });
    await w.done;
    const parked = await projections.parked('parks', 1);
    for (const p of parked) expect(p.partition).toBe(partitionOf(p.stream, 4));
    expect(parked.map((p) => p.stream).sort()).toEqual(['s-1', 's-4']);
    const status = await projections.status('parks');
    for (const s of status) expect(s.parked).toBe(parked.filter((p) => p.partition === s.key.partition).length);
    const total = [...logs.values()].reduce((n, l) => n + l.length, 0);
    expect(status.reduce((n, s) => n + s.applied, 0n)).toBe(BigInt(total - 2));
  });
});
