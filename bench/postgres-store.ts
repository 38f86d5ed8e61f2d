/**
 * PostgreSQL store benchmark: steerlog's PostgreSQL EventStore against emmett's PostgreSQL event store,
 * same machine, same server, same database.
 *
 *   npm --prefix bench ci                 # emmett is a dependency of the benchmark only
 *   npx tsx bench/postgres-store.ts
 *
 * For batch sizes 1, 10 and 100 it appends BENCH_EVENTS (default 100,000) events to one fresh stream per store,
 * one append after the other, each with an optimistic-concurrency check (the revision the previous append
 * returned), then reads the stream back in order. Prints events/s per store and the ratio ours/emmett
 * (≥ 1.0 means ours is at least as fast).
 *
 * Env: PG_URL (admin connection; default postgres://postgres@127.0.0.1:5432/test), BENCH_DB (database both stores
 * use, created and dropped by this script; default steerlog_bench), BENCH_EVENTS, BENCH_BATCHES (e.g. "1,10,100").
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import type { NewEvent } from '../runtime/ports/event-store.js';

const ADMIN_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const DB = process.env['BENCH_DB'] ?? 'steerlog_bench';
const N = Number(process.env['BENCH_EVENTS'] ?? 100_000);
const BATCHES = (process.env['BENCH_BATCHES'] ?? '1,10,100').split(',').map(Number);

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
  readonly appendMs: number;
  readonly readMs: number;
}

async function benchSteerlog(batch: number): Promise<Result> {
  const store = await openPostgresEventStore({ connectionString: dbUrl, schema: 'steerlog_bench', poolSize: 4 });
  const stream = `steerlog-b${batch}`;
  try {
    const t0 = performance.now();
    let expected: bigint | 'no_stream' = 'no_stream';
    for (let i = 0; i < N; i += batch) {
      const events: NewEvent[] = [];
      for (let j = i; j < Math.min(i + batch, N); j++) {
        events.push({ id: `e-${j}`, type: 'bench/event', time: 1_700_000_000_000 + j, data: payload(j) });
      }
      expected = (await store.append(stream, events, expected)).nextExpectedRevision;
    }
    const appendMs = performance.now() - t0;
    const t1 = performance.now();
    let count = 0;
    for await (const e of store.read(stream)) {
      if ((e.data as { i: number }).i !== count) throw new Error(`steerlog read out of order at ${count}`);
      count++;
    }
    const readMs = performance.now() - t1;
    if (count !== N) throw new Error(`steerlog read ${count} of ${N}`);
    return { store: 'steerlog', batch, appendMs, readMs };
  } finally {
    await store.close();
  }
}

async function benchEmmett(emmett: EmmettModule, core: EmmettCoreModule, batch: number): Promise<Result> {
  const store = emmett.getPostgreSQLEventStore(dbUrl);
  const stream = `emmett-b${batch}`;
  try {
    await store.schema.migrate();
    const t0 = performance.now();
    let expected: bigint | string = core.STREAM_DOES_NOT_EXIST;
    for (let i = 0; i < N; i += batch) {
      const events: { type: string; data: Record<string, unknown> }[] = [];
      for (let j = i; j < Math.min(i + batch, N); j++) events.push({ type: 'bench/event', data: payload(j) });
      expected = (await store.appendToStream(stream, events, { expectedStreamVersion: expected })).nextExpectedStreamVersion;
    }
    const appendMs = performance.now() - t0;
    const t1 = performance.now();
    const { events } = await store.readStream(stream);
    const readMs = performance.now() - t1;
    if (events.length !== N) throw new Error(`emmett read ${events.length} of ${N}`);
    events.forEach((e, i) => {
      if ((e as { data: { i: number } }).data.i !== i) throw new Error(`emmett read out of order at ${i}`);
    });
    return { store: 'emmett', batch, appendMs, readMs };
  } finally {
    await store.close();
  }
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
  console.log(`machine: ${cpus().length} cpus, ${cpus()[0]?.model ?? 'unknown CPU'}; node ${process.version}`);
  console.log(`PostgreSQL ${version} (${fsyncSettings}); database ${DB}; ${N.toLocaleString('en-US')} events per run`);

  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${DB}"`);
  });
  const results: Result[] = [];
  try {
    for (const batch of BATCHES) {
      // Interleaved per batch size, so slow drift on the machine hits both stores alike.
      for (const run of [() => benchSteerlog(batch), () => benchEmmett(emmett, core, batch)]) {
        const r = await run();
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
