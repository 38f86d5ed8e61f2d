import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { PostgresProjectionStore } from '../../adapters/checkpoints/postgres-projection-store.js';
import {
  isProjectionFailedError,
  isProjectionFencedError,
  isProjectionPartitionsMismatchError,
  partitionOf,
  startProjectionWorker,
  defineProjection,
  type ProjectionStore,
} from '../../projections/index.js';
import type { LogEvent } from '../../domain/events.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { appendChunks, foldTally, keyedTally, sessionLog, tableTally, type Tally } from './support/worker-fixtures.js';

const logsOf = (streams: number, turns: number): Map<string, LogEvent[]> =>
  new Map(Array.from({ length: streams }, (_, i) => [`s-${i}`, sessionLog(`s-${i}`, turns + (i % 3))]));

/** Appends the logs interleaved (a chunk of each stream in turn), so the global order mixes the streams. */
const appendInterleaved = async (store: MemoryEventStore, logs: Map<string, LogEvent[]>, from = 0): Promise<void> => {
  const longest = Math.max(...[...logs.values()].map((l) => l.length));
  for (let i = from; i < longest; i += 5) for (const [stream, events] of logs) if (i < events.length) await appendChunks(store, stream, events.slice(i, i + 5), 5);
};

describe('partitionOf', () => {
  it('is stable (FNV-1a of the UTF-8 bytes) and spreads streams over every partition', () => {
    expect(partitionOf('session-1', 8)).toBe(partitionOf('session-1', 8));
    expect(partitionOf('a', 1)).toBe(0);
    expect(partitionOf('', 2 ** 32)).toBe(0x811c9dc5); // the FNV offset basis: nothing hashed
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 800; i++) counts[partitionOf(`s-${i}`, 8)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(60);
  });
});

/** `shortLease`: a lease that outlives the calls made under it on a loaded machine, and `expire` runs it out. */
const describeStore = (
  label: string,
  open: () => Promise<{ store: ProjectionStore<never>; close: () => Promise<void> }>,
  expire: (ms: number) => Promise<void>,
  shortLease: number,
): void => {
  describe(`projection worker on the ${label} projection store`, () => {
    let projections: ProjectionStore<never>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store: projections, close } = await open());
    });
    afterAll(async () => close());

    it('fences a stale worker: a take-over increments the epoch, the old epoch can neither commit nor renew, and the checkpoint never moves back', async () => {
      const key = { name: 'fence', version: 1, partition: 0, partitions: 1 };
      const a = (await projections.acquire(key, 'A', shortLease))!;
      expect(a.epoch).toBe(1);
      expect(await projections.acquire(key, 'B', shortLease)).toBeNull();
      await projections.commit(a, { position: 10n, documents: new Map([['k', '{"v":"a"}']]), parked: [], applied: 1 });
      await expire(shortLease + 200);
      const b = (await projections.acquire(key, 'B', 60_000))!;
      expect(b.epoch).toBe(2);
      const stale = await projections.commit(a, { position: 20n, documents: new Map([['k', '{"v":"stale"}']]), parked: [], applied: 1 }).catch((e: unknown) => e);
      expect(isProjectionFencedError(stale)).toBe(true);
      expect((stale as Error).message).toMatch(/projection "fence"@1 partition 0: commit under epoch 1 refused/);
      expect(await projections.renew(a, 60_000)).toBe(false);
      expect(await projections.load(b)).toEqual({ position: 10n, documents: new Map([['k', '{"v":"a"}']]) });
      const back = await projections.commit(b, { position: 5n, documents: new Map([['k', '{"v":"back"}']]), parked: [], applied: 1 }).catch((e: unknown) => e);
      expect(isProjectionFencedError(back)).toBe(true);
      await projections.commit(b, { position: 11n, documents: new Map([['k', '{"v":"b"}']]), parked: [], applied: 1 });
      expect((await projections.load(b)).documents.get('k')).toBe('{"v":"b"}');
      await projections.release(b);
      const again = (await projections.acquire(key, 'B', 60_000))!;
      expect(again.epoch).toBe(3); // a take after a release is a new epoch: the released one is fenced too
      expect(isProjectionFencedError(await projections.commit(b, { position: 12n, documents: new Map(), parked: [], applied: 0 }).catch((e: unknown) => e))).toBe(true);
      await projections.release(again);
      const mismatch = await projections.acquire({ ...key, partitions: 2 }, 'C', 1000).catch((e: unknown) => e);
      expect(isProjectionPartitionsMismatchError(mismatch)).toBe(true);
    });

    it('a keyed projection over 3 partitions equals the one-shot fold, writes only changed documents, and resumes without applying anything twice', async () => {
      const store = new MemoryEventStore();
      const logs = logsOf(9, 2);
      await appendInterleaved(store, logs);
      const projection = keyedTally('keyed-resume');
      const committed: { partition: number; position: bigint }[] = [];
      const w1 = startProjectionWorker(projection, { store, projections, owner: 'w1', partitions: 3, follow: false, batchSize: 13, onCommit: (partition, position) => committed.push({ partition, position }) });
      await w1.done;
      expect(new Map([...w1.states()].sort())).toEqual(new Map([...foldTally(logs)].sort()));
      // more events for 3 streams only
      for (const stream of ['s-0', 's-1', 's-2']) {
        const longer = sessionLog(stream, 2 + (Number(stream.slice(2)) % 3) + 1);
        const extra = longer.slice(logs.get(stream)!.length);
        await appendChunks(store, stream, extra);
        logs.set(stream, longer);
      }
      const written: string[] = [];
      // the documents of every commit, whether of one partition or of several in one transaction
      const counting = new Proxy(projections, {
        get: (target, prop) =>
          prop === 'commit'
            ? (lease: Parameters<typeof target.commit>[0], commit: Parameters<typeof target.commit>[1]) => {
                written.push(...commit.documents.keys());
                return target.commit(lease, commit);
              }
            : prop === 'commitPartitions' && target.commitPartitions
              ? (entries: Parameters<NonNullable<typeof target.commitPartitions>>[0]) => {
                  for (const { commit } of entries) written.push(...commit.documents.keys());
                  return target.commitPartitions!(entries);
                }
              : (Reflect.get(target, prop) as unknown as { bind?: (t: unknown) => unknown } | undefined)?.bind?.(target) ?? Reflect.get(target, prop),
      });
      const w2 = startProjectionWorker(projection, { store, projections: counting, owner: 'w2', partitions: 3, follow: false });
      await w2.done;
      expect([...new Set(written)].sort()).toEqual(['s-0', 's-1', 's-2']); // only the documents that changed
      const status = await projections.status('keyed-resume');
      expect(status.map((s) => s.key.partition)).toEqual([0, 1, 2]);
      expect(status.every((s) => s.owner === null && s.parked === 0)).toBe(true);
      const total = [...logs.values()].reduce((n, l) => n + l.length, 0);
      expect(status.reduce((n, s) => n + s.applied, 0n)).toBe(BigInt(total)); // every event applied once, across both runs
      const docs = new Map<string, Tally>();
      for (let partition = 0; partition < 3; partition++) {
        const lease = (await projections.acquire({ name: 'keyed-resume', version: 1, partition, partitions: 3 }, 'reader', 1000))!;
        for (const [k, text] of (await projections.load(lease)).documents) docs.set(k, JSON.parse(text) as Tally);
        await projections.release(lease);
      }
      expect(docs).toEqual(foldTally(logs));
    });

    it('parks an event its fold refuses (position, stream, error), continues, and says so in status; under stop it fails naming the event', async () => {
      const store = new MemoryEventStore();
      const logs = logsOf(3, 1);
      await appendInterleaved(store, logs);
      const bad = (e: { stream: string; event: { seq: number } }): boolean => e.stream === 's-1' && e.event.seq === 3;
      const base = keyedTally();
      const picky = (name: string) =>
        defineProjection<{ n: number }>({
          name,
          version: 1,
          initialState: { n: 0 },
          evolve: (s, e) => {
            if (bad(e)) throw new Error('refused');
            s.n++;
            return s;
          },
        });
      void base;
      const parked = startProjectionWorker(picky('parks'), { store, projections, owner: 'p', follow: false, failure: 'park' });
      await parked.done;
      const total = [...logs.values()].reduce((n, l) => n + l.length, 0);
      expect(parked.states().get('')).toEqual({ n: total - 1 });
      const list = await projections.parked('parks', 1);
      expect(list.map((p) => ({ stream: p.stream, revision: p.revision, error: p.error }))).toEqual([{ stream: 's-1', revision: 3n, error: 'refused' }]);
      expect((await projections.status('parks'))[0]!.parked).toBe(1);
      const stopped = startProjectionWorker(picky('stops'), { store, projections, owner: 's', follow: false });
      const failure = await stopped.done.catch((e: unknown) => e);
      expect(isProjectionFailedError(failure)).toBe(true);
      expect((failure as Error).message).toMatch(/projection "stops"@1 failed on stream "s-1" at position \d+: refused/);
    });

    it('workers joining take their share at the next rebalance check, not at a lease renewal; while events arrive, every stream is applied once', async () => {
      const store = new MemoryEventStore();
      const full = logsOf(12, 3);
      const half = new Map([...full].map(([s, l]) => [s, l.slice(0, l.length >> 1)] as const));
      await appendInterleaved(store, half);
      const projection = keyedTally('joined');
      // a 60 s lease: renewals come every 20 s, after this test's 15 s limit; only the rebalance checks can hand over
      const options = { store, projections, partitions: 6, leaseMs: 60_000, rebalanceMs: 40, batchSize: 5, flushIntervalMs: 10 };
      const a = startProjectionWorker(projection, { ...options, owner: 'a' });
      await a.caughtUp;
      expect(a.owned()).toEqual([0, 1, 2, 3, 4, 5]);
      const b = startProjectionWorker(projection, { ...options, owner: 'b' });
      const c = startProjectionWorker(projection, { ...options, owner: 'c' });
      const rest = (async () => {
        for (const [stream, events] of full) await appendChunks(store, stream, events.slice(half.get(stream)!.length), 3);
      })();
      await until(() => a.owned().length === 2 && b.owned().length === 2 && c.owned().length === 2);
      expect([...a.owned(), ...b.owned(), ...c.owned()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
      await rest;
      const total = [...full.values()].reduce((n, l) => n + l.length, 0);
      await until(async () => (await projections.status('joined')).reduce((n, s) => n + s.applied, 0n) === BigInt(total));
      await Promise.all([a.stop(), b.stop(), c.stop()]);
      // every committed document equals the one-shot fold (the tally refuses an event applied twice or skipped)
      const docs = new Map<string, Tally>();
      for (let partition = 0; partition < 6; partition++) {
        const lease = (await projections.acquire({ name: 'joined', version: 1, partition, partitions: 6 }, 'reader', 1000))!;
        for (const [k, text] of (await projections.load(lease)).documents) docs.set(k, JSON.parse(text) as Tally);
        await projections.release(lease);
      }
      expect(new Map([...docs].sort())).toEqual(new Map([...foldTally(full)].sort()));
      expect((await projections.status('joined')).reduce((n, s) => n + s.applied, 0n)).toBe(BigInt(total));
    });

    it('two workers share the partitions, and one takes them all when the other stops', async () => {
      const store = new MemoryEventStore();
      const logs = logsOf(8, 1);
      await appendInterleaved(store, logs);
      const projection = keyedTally('shared');
      const options = { store, projections, partitions: 4, leaseMs: 300, batchSize: 7, flushIntervalMs: 20 };
      const a = startProjectionWorker(projection, { ...options, owner: 'a' });
      await a.caughtUp;
      const b = startProjectionWorker(projection, { ...options, owner: 'b' });
      await until(() => a.owned().length === 2 && b.owned().length === 2);
      expect([...a.owned(), ...b.owned()].sort()).toEqual([0, 1, 2, 3]);
      await b.stop();
      await until(() => a.owned().length === 4);
      await until(async () => (await projections.status('shared')).every((s) => s.position !== null && s.position >= 0n && s.owner === 'a'));
      const extra = sessionLog('s-late', 2);
      await appendChunks(store, 's-late', extra);
      logs.set('s-late', extra);
      await until(() => JSON.stringify((a.states() as Map<string, Tally>).get('s-late')) === JSON.stringify(foldTally(logs).get('s-late')));
      await a.stop();
      expect(new Map([...a.states()].sort())).toEqual(new Map([...foldTally(logs)].sort()));
    });
  });
};

/** Polls `check` every 20 ms (a condition on the workers' state, not a timing assertion); fails after 15 s. */
const until = async (check: () => boolean | Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 750; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not reached in 15 s');
};

let dir = '';
let clock = 1_000_000;
describeStore(
  'file',
  async () => {
    dir = await mkdtemp(join(tmpdir(), 'steerlog-projections-'));
    return { store: new FileProjectionStore(dir, { fsync: false, now: () => clock + Date.now() }), close: () => rm(dir, { recursive: true, force: true }) };
  },
  async (ms) => {
    clock += ms;
  },
  30_000,
);

const schema = uniqueSchema('i28w');
describePg('PostgreSQL', () => {
  describeStore(
    'PostgreSQL',
    async () => {
      const store = new PostgresProjectionStore({ connection: PG_URL, schema });
      return {
        store: store as unknown as ProjectionStore<never>,
        close: async () => {
          await store.close();
          await dropSchema(schema);
        },
      };
    },
    (ms) => new Promise((r) => setTimeout(r, ms)),
    1500,
  );

  describe('table projection', () => {
    const tschema = uniqueSchema('i28t');
    let projections: PostgresProjectionStore;
    let client: pg.Client;
    beforeAll(async () => {
      projections = new PostgresProjectionStore({ connection: PG_URL, schema: tschema });
      client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
    });
    afterAll(async () => {
      await projections.close();
      await client.end();
      await dropSchema(tschema);
    });

    it('writes its own tables in the checkpoint transaction: rows equal the fold, each event applied once, parked events rolled back alone', async () => {
      const store = new MemoryEventStore();
      const logs = logsOf(6, 2);
      await appendInterleaved(store, logs);
      const fail = (e: { stream: string; event: { seq: number } }): boolean => e.stream === 's-2' && e.event.seq === 4;
      const projection = tableTally('tt', 1, fail);
      const w = startProjectionWorker(projection, { store, projections, owner: 't', partitions: 2, follow: false, failure: 'park', batchSize: 11 });
      await w.done;
      const rows = await client.query<{ stream: string; n: number }>(`SELECT stream, n FROM "${tschema}".tt_v1_tally ORDER BY stream`);
      expect(rows.rows).toEqual([...logs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([stream, events]) => ({ stream, n: events.length - (stream === 's-2' ? 1 : 0) })));
      const parked = await projections.parked('tt', 1);
      expect(parked.map((p) => [p.stream, p.revision, p.error])).toEqual([['s-2', 4n, 'refused s-2#4']]);
      const status = await projections.status('tt');
      expect(status.reduce((n, s) => n + s.parked, 0)).toBe(1);
      // a second run finds nothing new: the rows stay as they are
      await startProjectionWorker(projection, { store, projections, owner: 't2', partitions: 2, follow: false, failure: 'park' }).done;
      const again = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${tschema}".tt_v1_applied`);
      expect(Number(again.rows[0]!.n)).toBe([...logs.values()].reduce((n, l) => n + l.length, 0) - 1);
      const stop = await startProjectionWorker(tableTally('tt-stop', 1, fail), { store, projections, owner: 'x', follow: false }).done.catch((e: unknown) => e);
      expect(isProjectionFailedError(stop)).toBe(true);
      expect((stop as Error).message).toMatch(/on stream "s-2" at position \d+: refused s-2#4/);
    });
  });
});
