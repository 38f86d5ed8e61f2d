/**
 * The Host under load over HTTP: 64 keep-alive connections post `session.prompt` (`mode: queue`, a unique
 * `messageId` each) for a fixed time across 32 sessions to real `steerlog serve` processes (built `dist/`, echo model
 * without delay, so every admission also wakes a turn: the admissions compete with the turns they cause), for
 * `durable: false` and `durable: true`, on JSONL, on PostgreSQL, and with two hosts sharing PostgreSQL (and once on a
 * `memory:` store, durable:false: no I/O, so the turns are never held up by the store; its events are counted from the
 * host's `/metrics`, and there is nothing to read back for the exactly-once check); beside them a
 * bare Hono server (`bench/support/bare-hono.ts`) answering the same request with a receipt and nothing else.
 *
 * Reports per run: admissions/s, the receipt's p50/p99/p999 (the client's round trip) and the host's event-loop
 * delay (p50/p99/max, measured inside the host process by `bench/support/loop-delay-probe.mjs`, preloaded; the
 * product carries no such hook). Afterwards reads every store back: every accepted messageId is admitted exactly once,
 * and the events stored per accepted prompt (the splice, plus the turns the prompts caused: how far the turns got)
 * give the server CPU per event (the CPU of the measured window over its admissions × events per admission), which
 * compares builds even when their turns ran unequally (`BENCH_EVENT_TYPES=1` prints the events by type).
 *
 * PostgreSQL runs also report what the hosts cost the database server (`support/pg-backend-usage.ts`): the CPU time
 * of the schema's backends during the measured window per admission (the server shares the machine's cores with the
 * hosts), and the append calls, the transactions that wrote events (commits), rows written and index scans per accepted prompt (the schema's table statistics).
 *
 * The load generator is written with undici (`Client`, one connection each, no pipelining), in the benchmark process;
 * the hosts run in their own processes on the same machine.
 *
 *   npm run bench:host                      # builds dist/; 64 connections, 32 sessions, 8 s per run
 *   BENCH_SECONDS=15 BENCH_ONLY=JSONL npm run bench:host
 *   BENCH_BASELINE=/path/to/older/steerlog npm run bench:host   # each run also against that checkout's dist/, side by side
 *   BENCH_CPU_PROF=/tmp/prof npm run bench:host                 # node --cpu-prof in every host (profiles there)
 *   BENCH_ECHO_DELAY_MS=600000 BENCH_ONLY=memory BENCH_PAIRS=4 …   # no turn runs (each waits in its model call): the admissions' own CPU
 *   BENCH_CPU_PROF=/tmp/p BENCH_HOLDS=/tmp/p BENCH_NODE_ARGS=--cpu-prof-interval=100 …   # the loop's long holds beside each profile (then bench/loop-holds.ts)
 *   BENCH_BASELINE=. BENCH_THIS_NODE_ARGS=--max-semi-space-size=32 …       # a Node option A/B on one build
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { openStore } from '../adapters/store/open-store.js';
import pg from 'pg';
import { machineLine } from './support/machine.js';
import { backendCpu, backendCpuBetween, schemaStatements, type BackendCpu, type SchemaStatements } from './support/pg-backend-usage.js';
import { type LoopDelay, LOOP_LEGEND, cellOf, loopCell, intervalCell, heldCell, mainHeldCell, idleCell, gcCell } from './support/loop-probe-reading.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PROBE = join(ROOT, 'bench/support/loop-delay-probe.mjs');
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 64);
const SESSIONS = Number(process.env['BENCH_SESSIONS'] ?? 32);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);
/** Load before the measured window (JIT warm-up, first writes): sent, not counted. */
const WARMUP_SECONDS = Number(process.env['BENCH_WARMUP_SECONDS'] ?? 2);
const WRITE_BATCH_MS = Number(process.env['BENCH_WRITE_BATCH_MS'] ?? 200);
const BASELINE = process.env['BENCH_BASELINE'] ? resolve(process.env['BENCH_BASELINE']) : null;
const CPU_PROF = process.env['BENCH_CPU_PROF'] ? resolve(process.env['BENCH_CPU_PROF']) : null;
const ONLY = process.env['BENCH_ONLY'] ?? '';
/** The echo model's delay per reply: with a long one every session's first turn waits in its model call, so no turn runs and the runs measure the admissions alone. */
const ECHO_DELAY_MS = Number(process.env['BENCH_ECHO_DELAY_MS'] ?? 0);
/** How many baseline/this pairs each configuration runs with `BENCH_BASELINE` (A-B-A-B…). */
const PAIRS = Number(process.env['BENCH_PAIRS'] ?? 2);
/** How long each run's servers idle before the load, for the loop probe's calibration (ms). */
const IDLE_MS = Number(process.env['BENCH_IDLE_MS'] ?? 1000);
const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Node options for every host (`BENCH_NODE_ARGS`, space-separated: `--trace-gc`, `--max-semi-space-size=32`, …) and for this build's hosts only (`BENCH_THIS_NODE_ARGS`). */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const THIS_NODE_ARGS = (process.env['BENCH_THIS_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** `BENCH_HOLDS=<dir>`: every host also records its loop's long holds there (`support/loop-holds-probe.mjs`, `holds.<pid>.jsonl`), to lay over its `BENCH_CPU_PROF` profile with `bench/loop-holds.ts`. */
const HOLDS = process.env['BENCH_HOLDS'] ? resolve(process.env['BENCH_HOLDS']) : null;
const HOLDS_PROBE = join(ROOT, 'bench/support/loop-holds-probe.mjs');

let schemas = 0;
const uniqueSchema = (): string => `bench_host_${process.pid}_${Date.now().toString(36)}_${schemas++}`;
const dropSchema = async (schema: string): Promise<void> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
};

/** A server process of the benchmark: its URL, its loop-delay readings, stop. */
interface Server {
  readonly url: string;
  /** Resets the loop-delay histogram (the reading since the previous call is returned). */
  loopDelay(): Promise<LoopDelay | null>;
  stop(): Promise<void>;
}

const startServer = async (args: readonly string[], env: Record<string, string>, probe: boolean, nodeArgs: readonly string[] = []): Promise<Server> => {
  const probeFile = join(mkdtempSync(join(tmpdir(), 'steerlog-bench-loop-')), 'loop.jsonl');
  const holds = probe && HOLDS ? ['--import', HOLDS_PROBE] : [];
  const child: ChildProcess = spawn(process.execPath, [...(probe ? ['--import', PROBE] : []), ...holds, ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []), ...nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, STEERLOG_LOOP_DELAY_FILE: probeFile, ...(holds.length > 0 ? { STEERLOG_LOOP_HOLDS_FILE: join(HOLDS!, `holds.%p.jsonl`) } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errTail = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  // the host logs one line per request: drain it, keep only the tail for a failure message
  child.stderr!.on('data', (c: Buffer) => (errTail = (errTail + c.toString()).slice(-4000)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start (${child.exitCode}): ${errTail}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  let readings = 0;
  return {
    url,
    loopDelay: async () => {
      if (!probe) return null;
      child.kill('SIGUSR2');
      readings++;
      const until = Date.now() + 10_000;
      for (;;) {
        // complete lines only: the probe may be writing the next one
        const text = existsSync(probeFile) ? readFileSync(probeFile, 'utf8') : '';
        const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
        if (lines.length >= readings) return JSON.parse(lines[readings - 1]!) as LoopDelay;
        if (Date.now() > until) return null;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(join(probeFile, '..'), { recursive: true, force: true });
    },
  };
};

const startHost = (root: string, spec: string, build: string) =>
  startServer([join(root, 'bin/steerlog.js'), 'serve', '--store', spec, '--port', '0', '--model', 'echo', '--write-batch-ms', String(WRITE_BATCH_MS)], { STEERLOG_ECHO_DELAY_MS: String(ECHO_DELAY_MS) }, true, [...NODE_ARGS, ...(build === 'this' ? THIS_NODE_ARGS : [])]);
const startBare = () => startServer(['--import', 'tsx', join(ROOT, 'bench/support/bare-hono.ts')], {}, true);

interface Body {
  readonly type: 'server-response';
  readonly result: { ok: boolean; error?: { code: string } };
}
const post = async (client: Client, method: string, payload: unknown): Promise<{ ms: number; body: Body }> => {
  const t0 = performance.now();
  const res = await client.request({
    method: 'POST',
    path: `/api/${method}`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: 'b', method, payload }),
  });
  const body = (await res.body.json()) as Body;
  return { ms: performance.now() - t0, body };
};
const pct = (xs: Float64Array, p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

interface Run {
  readonly label: string;
  readonly store: 'bare' | 'memory' | 'jsonl' | 'postgres';
  readonly hosts: number;
  readonly durable: boolean;
}
interface Result {
  readonly admissions: number;
  readonly refused: number;
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly loop: (LoopDelay | null)[];
  /** The same readings over a second of the idle servers before the load. */
  readonly idle: (LoopDelay | null)[];
  readonly exactlyOnce: boolean | null;
  /** Events in the stores per accepted prompt (the splice, and the turns the prompts caused); null for the bare server. */
  readonly eventsPerAdmission: number | null;
  /** PostgreSQL runs: the CPU ms of the schema's backends during the measured window. */
  readonly pgCpuMs: number | null;
  /** PostgreSQL runs: the schema's table statistics over the whole run, and the prompts accepted in it. */
  readonly pgStatements: { readonly stats: SchemaStatements; readonly accepted: number } | null;
}

let runNo = 0;
const runOnce = async (run: Run, root: string, build: string): Promise<Result> => {
  const tag = `r${++runNo}`;
  const jsonlDir = mkdtempSync(join(tmpdir(), 'steerlog-bench-host-'));
  const schema = uniqueSchema();
  const pg = new URL(PG_URL);
  pg.searchParams.set('schema', schema);
  const spec = run.store === 'jsonl' ? `jsonl:${jsonlDir}` : run.store === 'memory' ? 'memory:' : pg.toString();
  const servers: Server[] = [];
  try {
    for (let i = 0; i < run.hosts; i++) servers.push(run.store === 'bare' ? await startBare() : await startHost(root, spec, build));
    // the probe's calibration: the servers started and idle for a second (what the loop figures read with nothing to do)
    await Promise.all(servers.map((s) => s.loopDelay()));
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await Promise.all(servers.map((s) => s.loopDelay()));
    const sessions = Array.from({ length: SESSIONS }, (_, s) => `${tag}-s${s}`);
    const clients = Array.from({ length: CONNECTIONS }, (_, c) => new Client(servers[(c % SESSIONS) % servers.length]!.url, { pipelining: 1, keepAliveTimeout: 30_000 }));
    // each session is created on (and so owned by) one host; the connections that prompt it talk to that host
    if (run.store !== 'bare') await Promise.all(sessions.map((s, i) => post(clients[i]!, 'session.create', { sessionId: s })));
    const latencies: number[] = [];
    const accepted = new Map<string, string>();
    let admitted = 0;
    let refused = 0;
    const warm = performance.now() + WARMUP_SECONDS * 1000;
    const until = warm + SECONDS * 1000;
    // reset the loop-delay readings when the measured window opens: they cover the measured load only
    let pgAtWarm: BackendCpu | null = null;
    const resetAtWarm = new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000)).then(async () => {
      if (run.store === 'postgres') pgAtWarm = await backendCpu(PG_URL, schema);
      return Promise.all(servers.map((s) => s.loopDelay()));
    });
    await Promise.all(
      clients.map(async (client, c) => {
        const sessionId = sessions[c % SESSIONS]!;
        for (let k = 0; performance.now() < until; k++) {
          const messageId = `${tag}-c${c}-${k}`;
          const measured = performance.now() >= warm;
          const { ms, body } = await post(client, 'session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: messageId }], messageId, durable: run.durable });
          if (measured) latencies.push(ms);
          if (body.result.ok) {
            accepted.set(messageId, sessionId);
            if (measured) admitted++;
          } else refused++;
        }
      }),
    );
    const seconds = (performance.now() - warm) / 1000;
    await resetAtWarm;
    const loop = await Promise.all(servers.map((s) => s.loopDelay()));
    const pgCpuMs = run.store === 'postgres' && pgAtWarm !== null ? backendCpuBetween(pgAtWarm, await backendCpu(PG_URL, schema)) : null;
    // a memory store dies with its host: count its events from the host's own metrics (events appended) first
    let memoryEvents = 0;
    if (run.store === 'memory') {
      for (const s of servers) {
        const text = await (await fetch(`${s.url}/metrics`)).text();
        memoryEvents += Number(/^steerlog_store_append_batch_events_sum (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
      }
    }
    await Promise.all(clients.map((c) => c.close()));
    for (const s of servers) await s.stop();
    servers.length = 0;
    // the backends report their statistics when they exit (the hosts' pools ended with them)
    let pgStatements: Result['pgStatements'] = null;
    if (run.store === 'postgres') {
      await new Promise((r) => setTimeout(r, 300));
      pgStatements = { stats: await schemaStatements(PG_URL, schema), accepted: accepted.size };
      if (process.env['BENCH_PG_TABLES']) console.error(`${run.label}: ${accepted.size} admissions; per table inserted/updated/index scans/sequential scans:`, pgStatements.stats.byTable);
    }
    let exactlyOnce: boolean | null = null;
    let events = 0;
    const types = new Map<string, number>();
    if (run.store === 'memory') events = memoryEvents;
    else if (run.store !== 'bare') {
      const store = await openStore(spec);
      const counts = new Map<string, number>();
      try {
        for (const s of sessions)
          for await (const e of store.read(s)) {
            events++;
            types.set(e.type, (types.get(e.type) ?? 0) + 1);
            if (e.type === 'agent/inbox/spliced' && (e.data as { outcome?: string }).outcome === undefined)
              for (const m of (e.data as { inserted: { id: string }[] }).inserted) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
          }
      } finally {
        await store.close();
      }
      exactlyOnce = [...accepted.keys()].every((id) => counts.get(id) === 1) && [...counts.values()].every((n) => n === 1);
      if (process.env['BENCH_EVENT_TYPES']) console.error(`${run.label}: ${events} events for ${accepted.size} admissions:`, Object.fromEntries(types));
    }
    const sorted = Float64Array.from(latencies).sort();
    return { admissions: admitted, refused, rate: admitted / seconds, p50: pct(sorted, 50), p99: pct(sorted, 99), p999: pct(sorted, 99.9), loop, idle, exactlyOnce, eventsPerAdmission: accepted.size > 0 && run.store !== 'bare' ? events / accepted.size : null, pgCpuMs, pgStatements };
  } finally {
    for (const s of servers) await s.stop();
    rmSync(jsonlDir, { recursive: true, force: true });
    if (run.store === 'postgres') await dropSchema(schema);
  }
};

const runs = (
  [
  { label: 'bare Hono, same request', store: 'bare', hosts: 1, durable: false },
  { label: 'memory store, 1 host, durable:false', store: 'memory', hosts: 1, durable: false },
  { label: 'JSONL, 1 host, durable:false', store: 'jsonl', hosts: 1, durable: false },
  { label: 'JSONL, 1 host, durable:true', store: 'jsonl', hosts: 1, durable: true },
  { label: 'PostgreSQL, 1 host, durable:false', store: 'postgres', hosts: 1, durable: false },
  { label: 'PostgreSQL, 1 host, durable:true', store: 'postgres', hosts: 1, durable: true },
  { label: 'PostgreSQL, 2 hosts, durable:false', store: 'postgres', hosts: 2, durable: false },
  { label: 'PostgreSQL, 2 hosts, durable:true', store: 'postgres', hosts: 2, durable: true },
  ] as Run[]
).filter((r) => r.label.includes(ONLY) || r.store === 'bare');

const ms = (n: number) => `${n.toFixed(1)} ms`;
/** Server CPU per admission (all servers of the run), µs: the cost that does not depend on how loaded the machine is. */
const cpuCell = (r: Result) => (r.loop.every((l) => l !== null) && r.admissions > 0 ? `${((1000 * r.loop.reduce((a, l) => a + l!.cpuMs, 0)) / r.admissions).toFixed(0)} µs` : 'n/a');
/** Server CPU per event stored (admissions and the turns they caused differ from run to run: this compares builds when the turns ran unequally), µs. */
const cpuPerEventCell = (r: Result) =>
  r.loop.every((l) => l !== null) && r.eventsPerAdmission !== null && r.admissions > 0
    ? `${((1000 * r.loop.reduce((a, l) => a + l!.cpuMs, 0)) / (r.admissions * r.eventsPerAdmission)).toFixed(0)} µs`
    : 'n/a';
/** PostgreSQL runs: the schema's backends' CPU per admission of the measured window, µs. */
const pgCpuCell = (r: Result) => (r.pgCpuMs !== null && r.admissions > 0 ? `${((1000 * r.pgCpuMs) / r.admissions).toFixed(0)} µs` : '-');
/** PostgreSQL runs: append calls, commits (transactions that wrote events), rows written (inserted + updated) and index scans per accepted prompt, over the whole run. */
const pgStatementsCell = (r: Result) => {
  if (r.pgStatements === null || r.pgStatements.accepted === 0) return '-';
  const { stats, accepted } = r.pgStatements;
  return [stats.appends, stats.transactions, stats.rowsInserted + stats.rowsUpdated, stats.indexScans].map((n) => (n / accepted).toFixed(2)).join(' · ');
};
console.log(machineLine());
console.log(`load average at start: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`${CONNECTIONS} connections (undici) × ${SECONDS} s measured after ${WARMUP_SECONDS} s of warm-up, ${SESSIONS} sessions, echo model (${ECHO_DELAY_MS === 0 ? 'no delay' : `${ECHO_DELAY_MS} ms per reply`}), write-behind window ${WRITE_BATCH_MS} ms`);
console.log(LOOP_LEGEND);
console.log('| run | build | admissions | admissions/s | p50 | p99 | p999 | loop delay p50/p99/max (ms) | 10 ms interval p50/p99/max (ms) | CPU-held p99/p999/max (ms) | main-thread held p99/p999/max (ms) · run-queue wait (ms) | idle delay p99 · interval p99 (ms) | GC pauses | server CPU per admission | events per admission | server CPU per event | PostgreSQL backend CPU per admission | PostgreSQL appends · commits · rows written · index scans per admission | every accepted id exactly once |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const summaries: string[] = [];
for (const run of runs) {
  const builds: [string, string][] = run.store === 'bare' ? [['-', ROOT]] : BASELINE ? Array.from({ length: PAIRS }, (): [string, string][] => [['baseline', BASELINE], ['this', ROOT]]).flat() : [['this', ROOT]];
  const cpu = new Map<string, { cpuMs: number; pgCpuMs: number; admissions: number }>();
  for (const [name, root] of builds) {
    const r = await runOnce(run, root, name);
    if (r.loop.every((l) => l !== null)) {
      const sum = cpu.get(name) ?? { cpuMs: 0, pgCpuMs: 0, admissions: 0 };
      cpu.set(name, { cpuMs: sum.cpuMs + r.loop.reduce((a, l) => a + l!.cpuMs, 0), pgCpuMs: sum.pgCpuMs + (r.pgCpuMs ?? 0), admissions: sum.admissions + r.admissions });
    }
    const once = r.exactlyOnce === null ? '-' : r.exactlyOnce ? 'yes' : 'NO';
    console.log(`| ${run.label} | ${name} | ${r.admissions}${r.refused ? ` (${r.refused} refused)` : ''} | ${r.rate.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.p999)} | ${loopCell(r.loop)} | ${intervalCell(r.loop)} | ${heldCell(r.loop)} | ${mainHeldCell(r.loop)} | ${idleCell(r.idle)} | ${gcCell(r.loop)} | ${cpuCell(r)} | ${r.eventsPerAdmission === null ? '-' : r.eventsPerAdmission.toFixed(2)} | ${cpuPerEventCell(r)} | ${pgCpuCell(r)} | ${pgStatementsCell(r)} | ${once} |`);
  }
  // the runs of each build pooled: CPU over admissions, and this build's ratio to the baseline's
  const pooled = (name: string, pgSide = false) => {
    const c = cpu.get(name);
    return c && c.admissions > 0 ? (1000 * (pgSide ? c.pgCpuMs : c.cpuMs)) / c.admissions : null;
  };
  const a = pooled('baseline');
  const b = pooled('this');
  if (a !== null && b !== null) summaries.push(`${run.label}: server CPU per admission, all runs pooled: baseline ${a.toFixed(0)} µs, this ${b.toFixed(0)} µs (this/baseline ${(b / a).toFixed(2)})`);
  const pa = pooled('baseline', true);
  const pb = pooled('this', true);
  if (run.store === 'postgres' && pa !== null && pb !== null && pa > 0)
    summaries.push(`${run.label}: PostgreSQL backends' CPU per admission, all runs pooled: baseline ${pa.toFixed(0)} µs, this ${pb.toFixed(0)} µs (this/baseline ${(pb / pa).toFixed(2)})`);
}
for (const line of summaries) console.log(line);
console.log(`load average at end: ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')}`);
