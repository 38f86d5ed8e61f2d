/**
 * Projection workers on PostgreSQL, side by side in one run, over one generated store:
 *   1. the one-shot in-memory fold of the events read from the store (the target's baseline: table projection ≥ 0.3×
 *      of it), and the fold of the events already in arrays (information);
 *   2. a table projection (the same counts in a table, exactly-once with its checkpoint) with 1 worker process;
 *   3. the same with 2 and 4 worker processes over 8 partitions (total throughput, relative to 1 worker over 8 and
 *      over 1 partition), with the coordination beside it: how long until every worker held partitions, and the
 *      handovers (lease takes beyond one per partition). The workers of a run load first, then start together on "go";
 *      a run is timed from the "go";
 *   4. the time from a worker's kill -9 to its partitions' progress resuming (lease 2 s);
 *   5. checkpoint bytes per commit: keyed documents (one per session, written when changed) vs one state blob.
 *
 *   npx tsx bench/projection-workers.ts            # BENCH_EVENTS=200000 BENCH_SESSIONS=2000 by default
 *   BENCH_EVENTS=1000000 BENCH_SESSIONS=10000 npx tsx bench/projection-workers.ts
 *   BENCH_ROUNDS=3 BENCH_STORE_SCHEMA=bench_i28_store npx tsx bench/projection-workers.ts
 *
 * Env: PG_URL (default postgres://postgres@127.0.0.1:5432/test; the store and checkpoints go into two fresh schemas,
 * dropped at the end). BENCH_ROUNDS (default 1): the four table-projection runs are repeated in this many rounds,
 * interleaved (1/1, 1/8, 2/8, 4/8, then again), and each one's median is reported — on a shared machine, a run's
 * neighbours change from one second to the next. BENCH_STORE_SCHEMA: keep the generated store in this schema (not
 * dropped), and use it as it is when it already holds events (the generation of a 1M-event store takes minutes).
 * BENCH_BASELINE_ROOT: a checkout of another revision (e.g. `git worktree add /tmp/before <commit>`, with
 * node_modules): its worker runs too, interleaved with this one's in every round, as "before" (same store, same
 * checkpoint schema), so that a change is measured against what it replaces under the same load.
 * BENCH_ONLY=workers: the folds and the table-projection runs only (not the kill, nor the checkpoint bytes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import { PostgresProjectionStore } from '../adapters/checkpoints/postgres-projection-store.js';
import { partitionOf, startProjectionWorker, type ProjectionStore } from '../projections/index.js';
import { isKnownEvent, type LogEvent } from '../domain/events.js';
import { LogBuilder, msg } from '../testing/log-builder.js';
import { toLogEvent } from '../projections/sources/from-store.js';
import { benchBlob, benchKeyed, foldCounts, type SessionCounts } from './support/projection-bench-kinds.js';
import { fmt, machineLine, median } from './support/machine.js';

const URL_ = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 200_000);
const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 2_000);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const suffix = `${process.pid}_${Date.now().toString(36)}`;
const keptSchema = process.env['BENCH_STORE_SCHEMA'];
const storeSchema = keptSchema ?? `bench_i28_store_${suffix}`;
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 1));
const BASELINE_ROOT = process.env['BENCH_BASELINE_ROOT'];
const ONLY_WORKERS = process.env['BENCH_ONLY'] === 'workers';
const cpSchema = `bench_i28_cp_${suffix}`;

const sessionEvents = (id: string, target: number): LogEvent[] => {
  const b = new LogBuilder(id);
  let t = 0;
  while (b.events.length < target) b.followup(msg(`${id}-m${t++}`)).runTurn();
  return [...b.events];
};

const seconds = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e9;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const main = async (): Promise<void> => {
  console.log(machineLine());
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (a shared machine: other work runs beside this)`);
  const store = await openPostgresEventStore({ connectionString: URL_, schema: storeSchema });
  const admin = new pg.Client({ connectionString: URL_ });
  await admin.connect();
  const work = mkdtempSync(join(tmpdir(), 'steerlog-bench-workers-'));
  const children: ChildProcess[] = [];
  try {
    // the store: SESSIONS sessions of about EVENTS / SESSIONS events, appended in batches of 100, sessions interleaved
    // (or the kept store as it is)
    let t0 = process.hrtime.bigint();
    let logs: LogEvent[][] = [];
    let holdsEvents = false;
    if (keptSchema !== undefined) for await (const page of store.readAllPages!({ maxCount: 1 })) holdsEvents ||= page.length > 0;
    if (holdsEvents) {
      const byStream = new Map<string, LogEvent[]>();
      for await (const page of store.readAllPages!({})) {
        for (const r of page) {
          const parsed = toLogEvent(r);
          // the events of the generated sessions (not the ticks a kill run appended)
          if (parsed._tag !== 'Right' || !isKnownEvent(parsed.right)) continue;
          let list = byStream.get(r.stream);
          if (!list) byStream.set(r.stream, (list = []));
          list.push(parsed.right);
        }
      }
      logs = Array.from({ length: byStream.size }, (_, i) => byStream.get(`bench-${i}`) ?? []);
      console.log(`store: kept in schema ${storeSchema}, read in ${seconds(t0).toFixed(1)} s`);
    } else {
      const perSession = Math.max(10, Math.floor(EVENTS / SESSIONS));
      for (let i = 0; i < SESSIONS; i++) logs.push(sessionEvents(`bench-${i}`, perSession));
      for (let from = 0; from < perSession + 20; from += 100) {
        for (let i = 0; i < SESSIONS; i++) {
          const chunk = logs[i]!.slice(from, from + 100);
          if (chunk.length > 0) await store.append(`bench-${i}`, chunk.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'any');
        }
      }
    }
    const total = logs.reduce((n, l) => n + l.length, 0);
    const sessions = logs.length;
    console.log(`store: ${fmt(total)} events across ${fmt(sessions)} sessions, written in ${seconds(t0).toFixed(1)} s`);

    // 1. the plain in-memory fold
    const fold = (): number => {
      const t = process.hrtime.bigint();
      const state = new Map<string, SessionCounts>();
      for (let i = 0; i < logs.length; i++) for (const e of logs[i]!) foldCounts(state, `bench-${i}`, e.type, e.data);
      return seconds(t);
    };
    fold();
    const foldRate = total / Math.min(fold(), fold(), fold());
    console.log(`in-memory fold (events already in arrays): ${fmt(foldRate)} ev/s`);
    // 1b. the same fold over the events read from the store (page reads + parsing as session events): what a
    // projection without any checkpoint costs, the floor under any worker reading this store
    const storeFold = async (): Promise<number> => {
      const t = process.hrtime.bigint();
      const state = new Map<string, SessionCounts>();
      for await (const page of store.readAllPages!({})) {
        for (const r of page) {
          const parsed = toLogEvent(r);
          if (parsed._tag === 'Right') foldCounts(state, r.stream, parsed.right.type, parsed.right.data);
        }
      }
      return seconds(t);
    };
    const storeFoldRate = total / Math.min(await storeFold(), await storeFold());
    console.log(`in-memory fold of the events read from the store: ${fmt(storeFoldRate)} ev/s`);

    // bundle the worker process once (and the baseline's, from its own tree)
    const bundleOf = async (root: string, out: string): Promise<string> => {
      const outfile = join(work, out);
      await build({
        entryPoints: [join(root, 'bench/support/projection-bench-worker.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outfile,
        external: ['pg-native'],
        banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
        logLevel: 'error',
      });
      return outfile;
    };
    const bundle = await bundleOf(ROOT, 'worker.mjs');
    const baseline = BASELINE_ROOT !== undefined ? await bundleOf(BASELINE_ROOT, 'baseline-worker.mjs') : undefined;
    const projections = new PostgresProjectionStore({ connection: URL_, schema: cpSchema });
    /** The workers that loaded and wait for "go". */
    const ready = new Set<ChildProcess>();
    const spawnWorker = (version: number, partitions: number, owner: string, leaseMs = 10_000, code = bundle): ChildProcess => {
      const child = spawn(process.execPath, [code, JSON.stringify({ url: URL_, storeSchema, cpSchema, version, partitions, leaseMs, owner })], {
        stdio: ['pipe', 'inherit', 'pipe'],
      });
      let buffered = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
          const line = buffered.slice(0, i);
          buffered = buffered.slice(i + 1);
          if (line.includes('"started":true')) ready.add(child);
          else if (!line.includes('caughtUpSeconds')) process.stderr.write(`${line}\n`);
        }
      });
      children.push(child);
      return child;
    };
    /** Waits until every worker of `list` loaded, then starts them together; returns the start time. */
    const go = async (list: ChildProcess[]): Promise<bigint> => {
      while (!list.every((c) => ready.has(c))) await sleep(20);
      const t = process.hrtime.bigint();
      for (const c of list) c.stdin!.write('go\n');
      return t;
    };
    /** The position of the last event of each partition's streams (read before a run is timed). */
    const lastByPartition = async (partitions: number): Promise<Map<number, bigint>> => {
      const last = new Map<number, bigint>();
      for await (const page of store.readAllPages!({})) for (const e of page) last.set(partitionOf(e.stream, partitions), e.position);
      return last;
    };
    /**
     * Every partition's checkpoint reached the last event of its streams (a worker reads only its partitions' streams,
     * so a checkpoint stops at the last event it applied, not at the store's head).
     */
    /**
     * Polls status every 50 ms until every partition's checkpoint reached the last event of its streams; also notes
     * when every worker first held partitions (`workers` owners seen at once: how long joining took) and how many lease
     * takes there were (the sum of the epochs: one per take; a take beyond the first of each partition is a handover).
     */
    const caughtUp = async (version: number, partitions: number, last: ReadonlyMap<number, bigint>, workers = 1, t0 = process.hrtime.bigint()): Promise<{ joinedMs: number | null; takes: number }> => {
      let joinedMs: number | null = null;
      for (;;) {
        const rows = (await projections.status('bench-counts')).filter((r) => r.key.version === version);
        if (joinedMs === null && new Set(rows.map((r) => r.owner).filter((o) => o !== null)).size >= workers) joinedMs = Number(process.hrtime.bigint() - t0) / 1e6;
        if (rows.length === partitions && rows.every((r) => r.position !== null && r.position >= (last.get(r.key.partition) ?? -1n))) {
          return { joinedMs, takes: rows.reduce((n, r) => n + r.epoch, 0) };
        }
        await sleep(50);
      }
    };
    const stopAll = async (list: ChildProcess[]): Promise<void> => {
      await Promise.all(list.map((c) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : (c.once('exit', () => resolve()), c.kill('SIGTERM'))))));
    };
    const checkRows = async (version: number): Promise<void> => {
      const res = await admin.query<{ n: string; events: string }>(`SELECT count(*)::text AS n, sum(events)::text AS events FROM "${cpSchema}"."bench_counts_v${version}_counts"`);
      if (Number(res.rows[0]!.n) !== sessions || Number(res.rows[0]!.events) !== total) throw new Error(`version ${version}: rows ${res.rows[0]!.n}, events ${res.rows[0]!.events}: not the fold`);
    };

    // 2, 3. table projection: 1 worker (1 partition), then 1, 2 and 4 workers over 8 partitions
    const shapes = [
      { label: '1 worker, 1 partition', workers: 1, partitions: 1 },
      { label: '1 worker, 8 partitions', workers: 1, partitions: 8 },
      { label: '2 workers, 8 partitions', workers: 2, partitions: 8 },
      { label: '4 workers, 8 partitions', workers: 4, partitions: 8 },
    ];
    const runs: { label: string; workers: number; partitions: number; code: string }[] = shapes.flatMap((shape) => [
      ...(baseline !== undefined ? [{ ...shape, label: `before: ${shape.label}`, code: baseline }] : []),
      { ...shape, code: bundle },
    ]);
    const samples = new Map<string, number[]>();
    const coordination = new Map<string, { joinedMs: number | null; handovers: number }[]>();
    let version = 1;
    const lasts = new Map<number, Map<number, bigint>>([[1, await lastByPartition(1)], [8, await lastByPartition(8)]]);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const run of runs) {
        const v = version++;
        const list = Array.from({ length: run.workers }, (_, i) => spawnWorker(v, run.partitions, `w${v}-${i}`, 10_000, run.code));
        const start = await go(list);
        const { joinedMs, takes } = await caughtUp(v, run.partitions, lasts.get(run.partitions)!, run.workers, start);
        const s = seconds(start);
        await stopAll(list);
        await checkRows(v);
        await projections.drop('bench-counts', v);
        samples.set(run.label, [...(samples.get(run.label) ?? []), total / s]);
        coordination.set(run.label, [...(coordination.get(run.label) ?? []), { joinedMs, handovers: takes - run.partitions }]);
        console.log(
          `${ROUNDS > 1 ? `round ${round}: ` : ''}table projection, ${run.label}: ${fmt(total / s)} ev/s (${s.toFixed(1)} s from "go"; every worker held partitions after ${joinedMs === null ? '?' : joinedMs.toFixed(0)} ms; ${takes - run.partitions} handovers; load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    const rates = new Map([...samples].map(([label, xs]) => [label, median(xs)]));
    if (ROUNDS > 1) console.log(`(medians of ${ROUNDS} interleaved rounds below; load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
    for (const prefix of baseline !== undefined ? ['before: ', ''] : ['']) {
      const one = rates.get(`${prefix}1 worker, 1 partition`)!;
      const one8 = rates.get(`${prefix}1 worker, 8 partitions`)!;
      console.log('');
      if (prefix !== '') console.log(`${prefix}(the baseline's worker, ${BASELINE_ROOT})`);
      else if (baseline !== undefined) console.log('this revision:');
      console.log(`ratio table projection (1 worker) / one-shot fold of the same events read from the same store (the target's reading, ≥ 0.3): ${(one / storeFoldRate).toFixed(2)}`);
      console.log(`ratio table projection (1 worker) / fold of the events already in arrays (information): ${(one / foldRate).toPrecision(2)}`);
      console.log('');
      console.log('| workers over 8 partitions | ev/s | × 1 worker over 8 | × 1 worker over 1 | all holding after | handovers |');
      console.log('|---|---|---|---|---|---|');
      for (const n of [1, 2, 4]) {
        const label = `${prefix}${n} worker${n > 1 ? 's' : ''}, 8 partitions`;
        const r = rates.get(label)!;
        const cs = coordination.get(label)!;
        const joined = cs.map((c) => c.joinedMs).filter((j): j is number => j !== null);
        const handovers = cs.map((c) => c.handovers);
        console.log(
          `| ${n} | ${fmt(r)} | ${(r / one8).toFixed(2)} | ${(r / one).toFixed(2)} | ${joined.length === 0 ? '?' : `${median(joined).toFixed(0)} ms`} | ${ROUNDS > 1 ? handovers.join(', ') : handovers[0]} |`,
        );
      }
    }
    // 4. kill -9 of one of 2 live workers: time until its partitions progress again
    if (!ONLY_WORKERS) {
      const v = version++;
      const pair = [spawnWorker(v, 8, `k${v}-a`, 2000), spawnWorker(v, 8, `k${v}-b`, 2000)];
      await go(pair);
      await caughtUp(v, 8, lasts.get(8)!);
      for (;;) {
        const rows = (await projections.status('bench-counts')).filter((r) => r.key.version === v);
        if (new Set(rows.map((r) => r.owner)).size === 2 && rows.every((r) => r.owner !== null)) break;
        await sleep(50);
      }
      pair[0]!.kill('SIGKILL');
      const killedAt = Date.now();
      const lastAfter = new Map(lasts.get(8)!);
      for (let i = 0; i < 64; i++) {
        const appended = await store.append(`bench-${i}`, [{ id: crypto.randomUUID(), type: 'x/bench-tick', time: Date.now(), data: {}, ignorable: true }], 'any');
        lastAfter.set(partitionOf(`bench-${i}`, 8), appended.position);
      }
      await caughtUp(v, 8, lastAfter);
      console.log(`kill -9 of 1 of 2 workers (lease 2000 ms): its partitions' progress resumed after ${Date.now() - killedAt} ms`);
      await stopAll(pair);

      // 5. checkpoint bytes per commit: keyed documents vs one blob (in process, batches of 500)
      for (const [label, projection] of [
        ['keyed documents', benchKeyed(1)],
        ['one state blob', benchBlob(1)],
      ] as const) {
        let bytes = 0;
        let commits = 0;
        const counting = new Proxy(projections, {
          get: (target, prop) =>
            prop === 'commit'
              ? (lease: Parameters<typeof target.commit>[0], commit: Parameters<typeof target.commit>[1]) => {
                  commits++;
                  for (const [k, text] of commit.documents) bytes += k.length + (text?.length ?? 0);
                  return target.commit(lease, commit);
                }
              : (Reflect.get(target, prop) as unknown as { bind?: (t: unknown) => unknown } | undefined)?.bind?.(target) ?? Reflect.get(target, prop),
        }) as unknown as ProjectionStore<unknown>;
        t0 = process.hrtime.bigint();
        const w = startProjectionWorker(projection as never, { store, projections: counting, owner: `bytes-${label}`, follow: false, batchSize: 500 });
        await w.done;
        const s = seconds(t0);
        console.log(`${label}: ${fmt(bytes / commits)} bytes per commit (${commits} commits, ${fmt(total / s)} ev/s in process)`);
      }
    }
    await projections.close();
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await store.close();
    if (keptSchema === undefined) await admin.query(`DROP SCHEMA IF EXISTS "${storeSchema}" CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS "${cpSchema}" CASCADE`);
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  }
};

await main();
