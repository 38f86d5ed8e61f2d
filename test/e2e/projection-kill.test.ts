import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../adapters/store/open-store.js';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { PostgresProjectionStore } from '../../adapters/checkpoints/postgres-projection-store.js';
import type { LogEvent } from '../../domain/events.js';
import { partitionOf, type ProjectionStore } from '../../projections/index.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { seededRandom } from '../support/seeded-random.js';
import { appendChunks, foldTally, sessionLog, type Tally } from '../projections/support/worker-fixtures.js';

/**
 * Projection workers killed with SIGKILL at random points, during catch-up and while events keep arriving, on JSONL
 * (keyed documents in a file projection store) and PostgreSQL (a table projection writing its own tables): at the
 * end, the read model equals a one-shot fold of the same events, row for row, and every stream's applied count equals
 * its event count. Then three workers race for 4 partitions; one is paused (SIGSTOP) until the others take its
 * partitions and resumed (it must lose them: fenced), one is killed, and its partitions' progress resumes within
 * the lease time + 2 s.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KILLS = 22;
const LEASE_MS = 800;
const PARTITIONS = 4;
let bundle = '';
let work = '';

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'steerlog-kill-'));
  bundle = join(work, 'projection-worker.mjs');
  // one bundle, so each of the many worker processes starts in a fraction of a second
  await build({
    entryPoints: [join(ROOT, 'test/e2e/support/projection-worker-main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundle,
    external: ['@eventstore/db-client', '@kurrent/kurrentdb-client', 'pg-native'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  });
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Worker {
  readonly child: ChildProcess;
  out: string;
  err: string;
  readonly exited: Promise<number | null>;
}

const startWorker = (store: string, checkpoints: string, kind: 'keyed' | 'table', owner: string): Worker => {
  const child = spawn(process.execPath, [bundle, JSON.stringify({ store, checkpoints, kind, owner, partitions: PARTITIONS, leaseMs: LEASE_MS, batchSize: 17 })], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const w: Worker = {
    child,
    out: '',
    err: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout!.on('data', (d: Buffer) => (w.out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (w.err += d.toString()));
  return w;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 50 ms (a condition on the read model, not a timing assertion); fails after `ms`. */
const until = async (check: () => Promise<boolean>, ms = 60_000): Promise<void> => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`condition not reached in ${ms} ms`);
};

/** 12 sessions; half of each stored before the first worker starts, the rest appended while workers run and die. */
const makeLogs = (): Map<string, LogEvent[]> => new Map(Array.from({ length: 12 }, (_, i) => [`k-${i}`, sessionLog(`k-${i}`, 18 + i)]));

interface Harness {
  readonly storeSpec: string;
  readonly checkpoints: string;
  readonly kind: 'keyed' | 'table';
  readonly store: EventStore;
  readonly projections: ProjectionStore<unknown>;
  /** The read model: stream → tally, and stream → applied count. */
  readModel(): Promise<{ tallies: Map<string, Tally>; applied: Map<string, number> }>;
}

/**
 * The position of the last event of each partition's streams: where its checkpoint stands once caught up (a worker
 * reads only the streams of its partitions, so a checkpoint stops at the last event of its own streams).
 */
const headOf = async (store: EventStore): Promise<Map<number, bigint>> => {
  const heads = new Map<number, bigint>();
  for await (const e of store.readAll()) heads.set(partitionOf(e.stream, PARTITIONS), e.position);
  return heads;
};

const allCaughtUp = async (h: Harness, heads: ReadonlyMap<number, bigint>): Promise<boolean> => {
  const rows = await h.projections.status('kill');
  return rows.length === PARTITIONS && rows.every((r) => r.position !== null && r.position >= (heads.get(r.key.partition) ?? -1n));
};

const killScenario = async (h: Harness): Promise<void> => {
  const logs = makeLogs();
  const random = seededRandom(28);
  const appended = new Map<string, number>([...logs.keys()].map((s) => [s, 0]));
  const appendSome = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      const open = [...logs].filter(([s, events]) => appended.get(s)! < events.length);
      if (open.length === 0) return;
      const [stream, events] = open[Math.floor(random() * open.length)]!;
      const from = appended.get(stream)!;
      const n = 1 + Math.floor(random() * 6);
      await appendChunks(h.store, stream, events.slice(from, from + n), n);
      appended.set(stream, Math.min(events.length, from + n));
    }
  };
  for (const [stream, events] of logs) {
    await appendChunks(h.store, stream, events.slice(0, events.length >> 1), 25);
    appended.set(stream, events.length >> 1);
  }

  // 1. kill -9 at random points: the first ones during catch-up, the later ones while events keep arriving
  let duringCatchUp = 0;
  let duringLive = 0;
  for (let k = 0; k < KILLS; k++) {
    const w = startWorker(h.storeSpec, h.checkpoints, h.kind, `kill-${k}`);
    // the first half at random points (mostly catch-up); the second half once the worker caught up (live)
    if (k >= KILLS / 2) {
      const deadline = Date.now() + 20_000;
      while (!w.out.includes('caught-up') && Date.now() < deadline) {
        await appendSome(1);
        await sleep(25);
      }
    }
    const wait = (k >= KILLS / 2 ? 50 : 300) + Math.floor(random() * (k >= KILLS / 2 ? 700 : 2700));
    const end = Date.now() + wait;
    while (Date.now() < end) {
      if (k >= 4) await appendSome(1);
      await sleep(25);
    }
    if (w.out.includes('caught-up')) duringLive++;
    else duringCatchUp++;
    w.child.kill('SIGKILL');
    await w.exited;
    expect(w.err, `worker ${k}`).toBe('');
  }
  await appendSome(10_000); // the rest

  // 2. three workers race for the partitions; one paused past its lease (fenced when resumed), one killed
  const racers = [0, 1, 2].map((i) => startWorker(h.storeSpec, h.checkpoints, h.kind, `race-${i}`));
  const head = await headOf(h.store);
  await until(() => allCaughtUp(h, head));
  await until(async () => (await h.projections.status('kill')).every((r) => r.owner !== null) && new Set((await h.projections.status('kill')).map((r) => r.owner)).size === 3);
  const ownerOf = async (): Promise<Map<number, string | null>> => new Map((await h.projections.status('kill')).map((r) => [r.key.partition, r.owner]));
  const paused = racers[0]!;
  const pausedParts = [...(await ownerOf())].filter(([, o]) => o === 'race-0').map(([p]) => p);
  // paused at a random moment: inside a commit, a lease renewal or a read, or between them (no store holds a lock
  // that a paused worker could keep from the others)
  await sleep(Math.floor(random() * 300));
  paused.child.kill('SIGSTOP');
  const pausedAt = Date.now(); // the takeover is timed from the pause itself
  await appendSome(0);
  const extra = new Map([...logs.keys()].slice(0, 4).map((s) => [s, sessionLog(s, 18 + Number(s.slice(2)) + 2)]));
  for (const [s, longer] of extra) logs.set(s, longer);
  await appendSome(10); // while race-0 is paused: its partitions must be taken over for these to be applied
  await until(async () => {
    const owners = await ownerOf();
    return pausedParts.every((p) => owners.get(p) !== null && owners.get(p) !== 'race-0');
  });
  const takeover = Date.now() - pausedAt;
  paused.child.kill('SIGCONT');
  await until(async () => paused.out.includes('lost '), 10_000);

  await appendSome(10_000);
  const head1 = await headOf(h.store);
  await until(() => allCaughtUp(h, head1));
  await until(async () => (await h.projections.status('kill')).every((r) => r.owner !== null));
  const killed = racers[1]!;
  const killedParts = [...(await ownerOf())].filter(([, o]) => o === 'race-1').map(([p]) => p);
  for (const s of [...logs.keys()].slice(-4)) logs.set(s, sessionLog(s, 18 + Number(s.slice(2)) + 1));
  killed.child.kill('SIGKILL');
  await killed.exited;
  const killedAt = Date.now();
  await appendSome(8); // a few events after the kill: its partitions must be taken over for them to be applied
  const head2 = await headOf(h.store);
  await until(async () => {
    const rows = await h.projections.status('kill');
    return killedParts.every((p) => {
      const row = rows.find((r) => r.key.partition === p)!;
      return row.owner !== null && row.owner !== 'race-1' && row.position !== null && row.position >= (head2.get(p) ?? -1n);
    });
  });
  const resumed = Date.now() - killedAt;
  await appendSome(10_000);
  const head3 = await headOf(h.store);
  await until(() => allCaughtUp(h, head3));


  for (const w of [racers[0]!, racers[2]!]) w.child.kill('SIGTERM');
  expect(await racers[0]!.exited).toBe(0);
  expect(await racers[2]!.exited).toBe(0);
  expect(racers[2]!.err).toBe('');

  // 3. the read model equals the one-shot fold of the same events, row for row; nothing applied twice or skipped
  const { tallies, applied } = await h.readModel();
  const expected = foldTally(logs);
  if (h.kind === 'keyed') expect(new Map([...tallies].sort())).toEqual(new Map([...expected].sort()));
  else expect(new Map([...tallies].sort())).toEqual(new Map([...expected].map(([s, t]) => [s, { n: t.n, last: t.last, digest: 0 }] as const).sort()));
  expect(new Map([...applied].sort())).toEqual(new Map([...logs].map(([s, events]) => [s, events.length] as const).sort()));
  const status = await h.projections.status('kill');
  expect(status.every((r) => r.owner === null && r.parked === 0)).toBe(true);
  expect(status.reduce((n, r) => n + r.applied, 0n)).toBe(BigInt([...logs.values()].reduce((n, l) => n + l.length, 0)));
  console.log(
    `${h.kind}: ${KILLS} kills (${duringCatchUp} during catch-up, ${duringLive} live); paused worker's partitions taken over after ${takeover} ms; killed worker's partitions resumed after ${resumed} ms (lease ${LEASE_MS} ms)`,
  );
  expect(takeover).toBeLessThanOrEqual(LEASE_MS + 2000);
  expect(resumed).toBeLessThanOrEqual(LEASE_MS + 2000);
};

describe('projection workers under kill -9', () => {
  it('JSONL store, keyed documents in a file projection store', async () => {
    const dir = join(work, 'jsonl');
    const store = await openStore(`jsonl:${dir}`);
    const projections = new FileProjectionStore(join(work, 'jsonl-projections'), { fsync: false });
    try {
      await killScenario({
        storeSpec: `jsonl:${dir}`,
        checkpoints: join(work, 'jsonl-projections'),
        kind: 'keyed',
        store,
        projections: projections as unknown as ProjectionStore<unknown>,
        readModel: async () => {
          const tallies = new Map<string, Tally>();
          for (let partition = 0; partition < PARTITIONS; partition++) {
            const lease = (await projections.acquire({ name: 'kill', version: 1, partition, partitions: PARTITIONS }, 'checker', 60_000))!;
            for (const [k, text] of (await projections.load(lease)).documents) tallies.set(k, JSON.parse(text) as Tally);
            await projections.release(lease);
          }
          return { tallies, applied: new Map([...tallies].map(([s, t]) => [s, t.n])) };
        },
      });
    } finally {
      await store.close();
    }
  }, 240_000);

  it.skipIf(!postgresAvailable)('PostgreSQL store, a table projection writing its own tables', async () => {
    const storeSchema = uniqueSchema('i28ks');
    const cpSchema = uniqueSchema('i28kc');
    const storeSpec = `${PG_URL}?schema=${storeSchema}`;
    const store = await openStore(storeSpec);
    const projections = new PostgresProjectionStore({ connection: PG_URL, schema: cpSchema });
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await killScenario({
        storeSpec,
        checkpoints: `${PG_URL}#${cpSchema}`,
        kind: 'table',
        store,
        projections: projections as unknown as ProjectionStore<unknown>,
        readModel: async () => {
          const rows = await client.query<{ stream: string; n: number; last_seq: number }>(`SELECT stream, n, last_seq FROM "${cpSchema}".kill_v1_tally`);
          const counts = await client.query<{ stream: string; n: string }>(`SELECT stream, count(*)::text AS n FROM "${cpSchema}".kill_v1_applied GROUP BY stream`);
          return {
            tallies: new Map(rows.rows.map((r) => [r.stream, { n: r.n, last: r.last_seq, digest: 0 }])),
            applied: new Map(counts.rows.map((r) => [r.stream, Number(r.n)])),
          };
        },
      });
    } finally {
      await client.end();
      await projections.close();
      await store.close();
      await dropSchema(storeSchema);
      await dropSchema(cpSchema);
    }
  }, 240_000);
});
