/**
 * PostgreSQL store benchmark: steerlog's PostgreSQL EventStore against emmett's PostgreSQL event store,
 * same machine, same server, same database.
 *
 *   npm --prefix bench ci                 # emmett is a dependency of the benchmark only
 *   npx tsx bench/postgres-store.ts
 *
 * For batch sizes 1, 10 and 100 it appends BENCH_EVENTS (default 100,000) events to one fresh stream per store,
 * one append after the other, each with an optimistic-concurrency check (the revision the previous append
 * returned), then reads the stream back in order. The two stores take turns every BENCH_SLICE (5,000) events, and
 * read back twice in A-B-B-A order, so that load from other work on the machine hits both alike. Prints events/s per store and the ratio ours/emmett
 * (≥ 1.0 means ours is at least as fast).
 *
 * Env: PG_URL (admin connection; default postgres://postgres@127.0.0.1:5432/test), BENCH_DB (database both stores
 * use, created and dropped by this script; default steerlog_bench), BENCH_EVENTS, BENCH_BATCHES (e.g. "1,10,100"),
 * BENCH_SLICE, BENCH_NOTIFY=0 (steerlog without its in-transaction NOTIFY), BENCH_VERBOSE=1 (per-slice times).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import type { NewEvent } from '../runtime/ports/event-store.js';

const ADMIN_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB = process.env['BENCH_DB'] ?? 'steerlog_bench';
const N = Number(process.env['BENCH_EVENTS'] ?? 100_000);
const BATCHES = (process.env['BENCH_BATCHES'] ?? '1,10,100').split(',').map(Number);
/** Events per slice: the two stores take turns every SLICE events. */
const SLICE = Number(process.env['BENCH_SLICE'] ?? 5_000);

const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${DB}`;
  return u.toString();
})();

/** The slice of emmett's API this benchmark uses (typed here so the root typecheck does not need the package). */
interface EmmettStore {
  appendToStream(
    stream: string,
    events: { type: string; data: Record<string, unknown> }[],
    options?: { expectedStreamVersion?: bigint | string },
  ): Promise<{ nextExpectedStreamVersion: bigint }>;
  readStream(stream: string, options?: { from?: bigint; maxCount?: bigint }): Promise<{ events: unknown[] }>;
  schema: { migrate(): Promise<unknown> };
  close(): Promise<void>;
}
interface EmmettModule {
  getPostgreSQLEventStore(connectionString: string, options?: unknown): EmmettStore;
}
interface EmmettCoreModule {
  STREAM_DOES_NOT_EXIST: string;
}

const payload = (i: number): Record<string, unknown> => ({ i, text: 'a pending user message', tags: ['inbox', 'bench'] });

interface Result {
  readonly store: string;
  readonly batch: number;
  appendMs: number;
  readMs: number;
}

/** One store under test: appends one slice of the run, reads the whole stream back. */
interface Contender {
  readonly name: string;
  /** Appends events [from, to) in batches of `batch`; returns the time spent. */
  appendSlice(from: number, to: number): Promise<number>;
  /** Reads the stream back in full, checking order; returns the time spent. */
  readBack(): Promise<number>;
  close(): Promise<void>;
}

async function steerlogContender(batch: number): Promise<Contender> {
  const store = await openPostgresEventStore({ connectionString: dbUrl, schema: 'steerlog_bench', poolSize: 4, notify: process.env['BENCH_NOTIFY'] !== '0' });
  const stream = `steerlog-b${batch}`;
  let expected: bigint | 'no_stream' = 'no_stream';
  return {
    name: 'steerlog',
    async appendSlice(from, to) {
      const t0 = performance.now();
      for (let i = from; i < to; i += batch) {
        const events: NewEvent[] = [];
        for (let j = i; j < Math.min(i + batch, to); j++) {
          events.push({ id: `e-${j}`, type: 'bench/event', time: 1_700_000_000_000 + j, data: payload(j) });
        }
        expected = (await store.append(stream, events, expected)).nextExpectedRevision;
      }
      return performance.now() - t0;
    },
    async readBack() {
      const t0 = performance.now();
      let count = 0;
      for await (const e of store.read(stream)) {
        if ((e.data as { i: number }).i !== count) throw new Error(`steerlog read out of order at ${count}`);
        count++;
      }
      const ms = performance.now() - t0;
      if (count !== N) throw new Error(`steerlog read ${count} of ${N}`);
      return ms;
    },
    close: () => store.close(),
  };
}

async function emmettContender(emmett: EmmettModule, core: EmmettCoreModule, batch: number): Promise<Contender> {
  const store = emmett.getPostgreSQLEventStore(dbUrl);
  await store.schema.migrate();
  const stream = `emmett-b${batch}`;
  let expected: bigint | string = core.STREAM_DOES_NOT_EXIST;
  return {
    name: 'emmett',
    async appendSlice(from, to) {
      const t0 = performance.now();
      for (let i = from; i < to; i += batch) {
        const events: { type: string; data: Record<string, unknown> }[] = [];
        for (let j = i; j < Math.min(i + batch, to); j++) events.push({ type: 'bench/event', data: payload(j) });
        expected = (await store.appendToStream(stream, events, { expectedStreamVersion: expected })).nextExpectedStreamVersion;
      }
      return performance.now() - t0;
    },
    async readBack() {
      const t0 = performance.now();
      const { events } = await store.readStream(stream);
      const ms = performance.now() - t0;
      if (events.length !== N) throw new Error(`emmett read ${events.length} of ${N}`);
      events.forEach((e, i) => {
        if ((e as { data: { i: number } }).data.i !== i) throw new Error(`emmett read out of order at ${i}`);
      });
      return ms;
    },
    close: () => store.close(),
  };
}

/**
 * Both stores append the same run in alternating slices (this machine is shared, so its load drifts; slices make
 * both stores see the same conditions), then each reads its stream back twice, in A-B-B-A order.
 */
async function benchBatch(batch: number, emmett: EmmettModule, core: EmmettCoreModule): Promise<Result[]> {
  const contenders = [await steerlogContender(batch), await emmettContender(emmett, core, batch)];
  const results = contenders.map((c) => ({ store: c.name, batch, appendMs: 0, readMs: 0 }));
  try {
    for (let from = 0; from < N; from += SLICE) {
      const to = Math.min(from + SLICE, N);
      const order = (from / SLICE) % 2 === 0 ? [0, 1] : [1, 0];
      const sliceMs = [0, 0];
      for (const k of order) sliceMs[k] = await contenders[k]!.appendSlice(from, to);
      results[0]!.appendMs += sliceMs[0]!;
      results[1]!.appendMs += sliceMs[1]!;
      if (process.env['BENCH_VERBOSE']) console.log(`    slice ${from}-${to}: steerlog ${sliceMs[0]!.toFixed(0)} ms, emmett ${sliceMs[1]!.toFixed(0)} ms`);
    }
    for (const k of [0, 1, 1, 0]) results[k]!.readMs += (await contenders[k]!.readBack()) / 2;
  } finally {
    for (const c of contenders) await c.close();
  }
  return results;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const rate = (ms: number): string => `${Math.round((N / ms) * 1000).toLocaleString('en-US')} ev/s`;

async function main(): Promise<void> {
  // Resolved from bench/node_modules: emmett never enters the root dependency tree.
  const emmettSpec: string = '@event-driven-io/emmett-postgresql';
  const coreSpec: string = '@event-driven-io/emmett';
  let emmett: EmmettModule;
  let core: EmmettCoreModule;
  try {
    emmett = (await import(emmettSpec)) as EmmettModule;
    core = (await import(coreSpec)) as EmmettCoreModule;
  } catch (e) {
    console.error('emmett is not installed: run `npm --prefix bench ci` first.', (e as Error).message);
    process.exitCode = 1;
    return;
  }

  const version = await admin(async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v);
  const fsyncSettings = await admin(async (c) =>
    (await c.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method') ORDER BY name",
    )).rows.map((r) => `${r.name}=${r.setting}`).join(' '),
  );
  console.log(`machine: ${cpus().length} cpus (nproc), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, ${cpus()[0]?.model ?? 'unknown CPU'}; node ${process.version}`);
  console.log(`PostgreSQL ${version} (${fsyncSettings}); database ${DB}; ${N.toLocaleString('en-US')} events per run`);

  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${DB}"`);
  });
  const results: Result[] = [];
  try {
    for (const batch of BATCHES) {
      for (const r of await benchBatch(batch, emmett, core)) {
        results.push(r);
        console.log(
          `  ${r.store.padEnd(8)} batch ${String(batch).padStart(3)}: append ${(r.appendMs / 1000).toFixed(2)} s (${rate(r.appendMs)}), read ${(r.readMs / 1000).toFixed(2)} s (${rate(r.readMs)})`,
        );
      }
    }
  } finally {
    if (!process.env['BENCH_KEEP_DB']) await admin((c) => c.query(`DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`));
  }

  console.log('\n| batch | steerlog append ev/s | emmett append ev/s | append ratio | steerlog read ev/s | emmett read ev/s | read ratio |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  let minAppendRatio = Number.POSITIVE_INFINITY;
  for (const batch of BATCHES) {
    const ours = results.find((r) => r.store === 'steerlog' && r.batch === batch)!;
    const theirs = results.find((r) => r.store === 'emmett' && r.batch === batch)!;
    const appendRatio = theirs.appendMs / ours.appendMs;
    const readRatio = theirs.readMs / ours.readMs;
    minAppendRatio = Math.min(minAppendRatio, appendRatio);
    console.log(
      `| ${batch} | ${rate(ours.appendMs)} | ${rate(theirs.appendMs)} | ${appendRatio.toFixed(2)} | ${rate(ours.readMs)} | ${rate(theirs.readMs)} | ${readRatio.toFixed(2)} |`,
    );
  }
  console.log(`\nratio = emmett time / steerlog time (≥ 1.0: steerlog at least as fast). Lowest append ratio: ${minAppendRatio.toFixed(2)}`);
}

await main();
