import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { PostgresProjectionStore } from '../../adapters/checkpoints/postgres-projection-store.js';
import { defineKeyedProjection, ParkedPartitionBusyError, replayParked, startProjectionWorker } from '../../projections/index.js';
import type { LogEvent } from '../../domain/events.js';
import { describePg, PG_URL, schemaFixture } from '../adapters/store/postgres/pg-test-support.js';
import { appendChunks, sessionLog, tableTally } from './support/worker-fixtures.js';

// The parked path end to end: a worker under `park` sets the events it cannot apply aside and goes on; once the
// cause is fixed, replayParked applies exactly those events (nothing else twice), empties the dead-letter list, and
// the read model equals the fold of every event. An event that fails again stays parked, with its new error.

const logsOf = (streams: number, turns: number): Map<string, LogEvent[]> => new Map(Array.from({ length: streams }, (_, i) => [`s-${i}`, sessionLog(`s-${i}`, turns)]));
const fill = async (logs: Map<string, LogEvent[]>): Promise<MemoryEventStore> => {
  const store = new MemoryEventStore();
  for (const [stream, events] of logs) await appendChunks(store, stream, events, 5);
  return store;
};

/** Per stream: the events counted and the sum of their seqs (order-free: a replayed event lands after later ones). */
interface Sums {
  n: number;
  seqs: number;
}
const refused = new Set<string>();
const sums = defineKeyedProjection<Sums>({
  name: 'sums',
  version: 1,
  initialState: { n: 0, seqs: 0 },
  evolve: (s, e) => {
    if (refused.has(`${e.stream}#${e.event.seq}`)) throw new Error(`refused ${e.stream}#${e.event.seq}`);
    s.n++;
    s.seqs += e.event.seq;
    return s;
  },
});

describe('replayParked on the file projection store (a keyed fold)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'steerlog-replay-parked-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('re-applies exactly the parked events once fixed; one that fails again stays parked', async () => {
    const logs = logsOf(4, 3);
    const store = await fill(logs);
    const projections = new FileProjectionStore(dir, { fsync: false });
    refused.clear();
    refused.add('s-1#2').add('s-3#5');
    await startProjectionWorker(sums, { store, projections, owner: 'w', partitions: 2, follow: false, failure: 'park', batchSize: 7 }).done;
    const parked = await projections.parked('sums', 1);
    expect(parked.map((p) => [p.stream, p.revision, p.error])).toEqual([
      ['s-1', 2n, 'refused s-1#2'],
      ['s-3', 5n, 'refused s-3#5'],
    ]);
    expect((await projections.status('sums')).reduce((n, s) => n + s.parked, 0)).toBe(2);

    // s-1#2 is fixed, s-3#5 still fails
    refused.delete('s-1#2');
    const first = await replayParked(sums, { store, projections, owner: 'r', partitions: 2 });
    expect(first.replayed.map((p) => [p.stream, p.revision])).toEqual([['s-1', 2n]]);
    expect(first.stillParked.map((p) => [p.stream, p.revision, p.error])).toEqual([['s-3', 5n, 'refused s-3#5']]);
    expect((await projections.parked('sums', 1)).map((p) => p.stream)).toEqual(['s-3']);

    refused.clear();
    const second = await replayParked(sums, { store, projections, owner: 'r', partitions: 2 });
    expect(second.replayed.map((p) => [p.stream, p.revision])).toEqual([['s-3', 5n]]);
    expect(second.stillParked).toEqual([]);
    expect(await projections.parked('sums', 1)).toEqual([]);
    expect((await projections.status('sums')).reduce((n, s) => n + s.parked, 0)).toBe(0);

    // the documents now equal the fold of every event (each applied once), and a new worker finds nothing to do
    const after = startProjectionWorker(sums, { store, projections, owner: 'w2', partitions: 2, follow: false });
    await after.done;
    const fold = Object.fromEntries([...logs].map(([stream, events]) => [stream, { n: events.length, seqs: events.reduce((n, e) => n + e.seq, 0) }]));
    expect(Object.fromEntries(after.states())).toEqual(fold);
    expect((await projections.status('sums')).reduce((n, s) => n + s.applied, 0n)).toBe(BigInt([...logs.values()].reduce((n, l) => n + l.length, 0)));
    await projections.close();
  });

  it('refuses a partition a live worker holds (ParkedPartitionBusyError), leaving its parked events as they are', async () => {
    const logs = logsOf(2, 2);
    const store = await fill(logs);
    const projections = new FileProjectionStore(join(dir, 'busy'), { fsync: false });
    refused.clear();
    refused.add('s-0#1');
    const live = startProjectionWorker(sums, { store, projections, owner: 'live', follow: true, failure: 'park', flushIntervalMs: 5 });
    await live.caughtUp;
    const busy = await replayParked(sums, { store, projections, owner: 'r' }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(ParkedPartitionBusyError);
    expect((await projections.parked('sums', 1)).map((p) => [p.stream, p.revision])).toEqual([['s-0', 1n]]);
    await live.stop();
    refused.clear();
    expect((await replayParked(sums, { store, projections, owner: 'r' })).replayed).toHaveLength(1);
    await projections.close();
  });
});

describePg('replayParked on PostgreSQL (a table projection)', () => {
  const fx = schemaFixture('replay_parked', (schema) => new PostgresProjectionStore({ connection: PG_URL, schema }));

  it('applies the parked event in a transaction with its removal from the dead-letter table: rows equal the fold, each event applied once', async () => {
    const { opened: projections, client, schema } = fx;
    const logs = logsOf(5, 2);
    const store = await fill(logs);
    let broken = true;
    const projection = tableTally('rp', 1, (e) => broken && e.stream === 's-2' && e.event.seq === 3);
    await startProjectionWorker(projection, { store, projections, owner: 't', partitions: 2, follow: false, failure: 'park', batchSize: 9 }).done;
    expect((await projections.parked('rp', 1)).map((p) => [p.stream, p.revision])).toEqual([['s-2', 3n]]);
    const missing = await client.query(`SELECT 1 FROM "${schema}".rp_v1_applied WHERE stream = 's-2' AND seq = 3`);
    expect(missing.rowCount).toBe(0);

    // still broken: it stays parked, nothing written
    const again = await replayParked(projection, { store, projections, owner: 'r', partitions: 2 });
    expect(again.stillParked.map((p) => p.error)).toEqual(['refused s-2#3']);
    expect((await client.query(`SELECT 1 FROM "${schema}".rp_v1_applied WHERE stream = 's-2' AND seq = 3`)).rowCount).toBe(0);

    broken = false;
    const fixed = await replayParked(projection, { store, projections, owner: 'r', partitions: 2 });
    expect(fixed.replayed.map((p) => [p.stream, p.revision])).toEqual([['s-2', 3n]]);
    expect(await projections.parked('rp', 1)).toEqual([]);
    const rows = await client.query<{ stream: string; n: number }>(`SELECT stream, n FROM "${schema}".rp_v1_tally ORDER BY stream`);
    expect(rows.rows).toEqual([...logs].map(([stream, events]) => ({ stream, n: events.length })));
    const applied = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${schema}".rp_v1_applied`);
    expect(Number(applied.rows[0]!.n)).toBe([...logs.values()].reduce((n, l) => n + l.length, 0)); // the primary key: none twice
    // replaying again finds nothing
    expect(await replayParked(projection, { store, projections, owner: 'r', partitions: 2 })).toEqual({ replayed: [], stillParked: [] });
  });
});
