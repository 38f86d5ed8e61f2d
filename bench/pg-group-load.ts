/**
 * The PostgreSQL store under the host's write pattern, without the host: 32 streams, each written by one writer that
 * appends its next batch when the previous one returned (as a session's write-behind does: one write in flight per
 * stream, the expected revision the last one returned), batches of 1–9 events shaped like a session's (prompt splices
 * with metadata, turn and step events, chunks and messages with searchable text, each with a chain hash). So the
 * store's group commit forms its groups as under `steerlog serve`. A fixed amount of work per run.
 *
 * Reports per run: appends/s and events/s, the append's latency p50/p99 (call to result), this process's CPU per
 * append (the store's checks and encoding, the `pg` driver), the schema's backends' CPU per append (read from /proc:
 * the server must run on this machine), and the round trips (statements the store sent) and commits per append.
 * `BENCH_BASELINE=<checkout>` also runs that checkout's store (its `adapters/store/postgres`), interleaved A B A B.
 *
 *   npx tsx bench/pg-group-load.ts [--appends 200] [--streams 32] [--pairs 2]
 *   BENCH_BASELINE=/path/to/older/steerlog npx tsx bench/pg-group-load.ts
 *
 * `PG_URL` defaults to `postgres://postgres@127.0.0.1:5432/test`.
 */
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { EventStore, ExpectedRevision, NewEvent } from '../runtime/ports/event-store.js';
import { argOf } from './support/bench-args.js';
import { machineLine } from './support/machine.js';
import { backendCpu, backendCpuBetween } from './support/pg-backend-usage.js';

const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const APPENDS = Number(argOf('appends', '200'));
const STREAMS = Number(argOf('streams', '32'));
const PAIRS = Number(argOf('pairs', '2'));
const BASELINE = process.env['BENCH_BASELINE'] ? resolve(process.env['BENCH_BASELINE']) : null;
const ROOT = fileURLToPath(new URL('../', import.meta.url));

type Open = (options: { connectionString: string; schema: string }) => Promise<EventStore & { close(): Promise<void> }>;
const openerOf = async (root: string): Promise<Open> => {
  countStatements(root);
  const mod = (await import(join(root, 'adapters/store/postgres/index.ts'))) as { openPostgresEventStore: Open };
  return mod.openPostgresEventStore;
};

const hex = (n: number): string => n.toString(16).padStart(64, '0');
let ids = 0;
const id = (): string => `00000000-0000-4000-8000-${(ids++).toString(16).padStart(12, '0')}`;

/** A session's events, in order: a turn per prompt (the prompt's splice, the turn's claim, step, reply, end). */
const sessionEvents = function* (stream: string): Generator<NewEvent> {
  const now = (): number => Date.now();
  yield { id: id(), type: 'session/created', time: now(), data: { createdAt: now(), kind: 'ordinary', model: { provider: 'echo', model: 'echo-1' } }, hash: hex(ids) };
  for (let turn = 1; ; turn++) {
    const m = `${stream}-m${turn}`;
    const actor = { actor: 'local', actorKind: 'user' as const };
    yield { id: id(), type: 'agent/inbox/spliced', time: now(), data: { target: 'next-turn', start: 0, inserted: [{ id: m, role: 'user', content: [{ type: 'text', text: m }], source: { kind: 'user', rpcId: 'b', actor: 'local' } }] }, metadata: actor, hash: hex(ids) };
    const start = id();
    yield { id: start, type: 'turn/start', time: now(), data: { turn }, hash: hex(ids) };
    yield { id: id(), type: 'agent/inbox/spliced', time: now(), data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }, metadata: { causationId: start }, hash: hex(ids) };
    yield { id: id(), type: 'step/start', time: now(), data: { turn, step: 1 }, hash: hex(ids) };
    yield { id: id(), type: 'user/message', time: now(), data: { turn, message: { id: m, role: 'user', content: [{ type: 'text', text: m }], source: { kind: 'user', rpcId: 'b', actor: 'local' } } }, metadata: actor, hash: hex(ids) };
    yield { id: id(), type: 'assistant/chunk', time: now(), data: { turn, step: 1, chunk: { type: 'text', text: 'echo: ' } }, hash: hex(ids) };
    yield { id: id(), type: 'assistant/chunk', time: now(), data: { turn, step: 1, chunk: { type: 'text', text: m } }, hash: hex(ids) };
    yield { id: id(), type: 'assistant/message', time: now(), data: { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `echo: ${m}` }], source: { kind: 'model', provider: 'echo', model: 'echo-1' } } }, hash: hex(ids) };
    yield { id: id(), type: 'step/end', time: now(), data: { turn, step: 1 }, hash: hex(ids) };
    yield { id: id(), type: 'turn/end', time: now(), data: { turn, reason: { kind: 'completed' } }, metadata: { causationId: start }, hash: hex(ids) };
  }
};

/** Counts the statements the stores send on their pools (the `query` calls of the connections of each checkout's `pg`). */
let statements = 0;
const countStatements = (root: string): void => {
  const proto = (createRequire(join(root, 'package.json'))('pg') as typeof pg).Client.prototype as unknown as { query: (...args: unknown[]) => unknown; counted?: true };
  if (proto.counted) return;
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    statements++;
    return query.apply(this, args);
  };
  proto.counted = true;
};

interface Result {
  readonly appends: number;
  readonly events: number;
  readonly seconds: number;
  readonly p50: number;
  readonly p99: number;
  readonly clientUs: number;
  readonly backendUs: number;
  readonly statements: number;
  readonly commits: number;
}

let runs = 0;
const runOnce = async (open: Open): Promise<Result> => {
  const schema = `bench_pg_group_${process.pid}_${runs++}`;
  const store = await open({ connectionString: PG_URL, schema });
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    // batches of 1–9 events (a session's write-behind batch), the same sequence for every run
    const plans = Array.from({ length: STREAMS }, (_, s) => {
      const gen = sessionEvents(`s${s}`);
      return Array.from({ length: APPENDS }, (_, k) => Array.from({ length: 1 + ((s * 7 + k * 5) % 9) }, () => gen.next().value as NewEvent));
    });
    // the pool's connections open and the statements are prepared before the window: one append per stream
    await Promise.all(plans.map((p, s) => store.append(`s${s}`, p[0]!, 'no_stream')));
    const commitsOf = async (): Promise<number> => Number((await admin.query(`SELECT count(DISTINCT recorded_at) AS n FROM "${schema}".events`)).rows[0].n);
    const commitsBefore = await commitsOf();
    const latencies: number[] = [];
    const cpuBefore = process.cpuUsage();
    const pgBefore = await backendCpu(PG_URL, schema);
    const statementsBefore = statements;
    const t0 = performance.now();
    let events = 0;
    await Promise.all(
      plans.map(async (p, s) => {
        let expected: ExpectedRevision = BigInt(p[0]!.length - 1);
        for (const batch of p.slice(1)) {
          const t = performance.now();
          const r = await store.append(`s${s}`, batch, expected);
          latencies.push(performance.now() - t);
          expected = r.nextExpectedRevision;
          events += batch.length;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const sent = statements - statementsBefore;
    const pgMs = backendCpuBetween(pgBefore, await backendCpu(PG_URL, schema));
    const appends = latencies.length;
    const commits = (await commitsOf()) - commitsBefore;
    const sorted = latencies.sort((a, b) => a - b);
    return {
      appends,
      events,
      seconds,
      p50: sorted[Math.floor(sorted.length / 2)]!,
      p99: sorted[Math.floor(sorted.length * 0.99)]!,
      clientUs: ((cpu.user + cpu.system) / appends),
      backendUs: (pgMs * 1000) / appends,
      statements: sent / appends,
      commits: commits / appends,
    };
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
};

console.log(machineLine());
console.log(`load average at start: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`${STREAMS} streams × ${APPENDS} appends of 1–9 events, one write in flight per stream`);
console.log('| build | appends/s | events/s | append p50 | append p99 | client CPU per append | backend CPU per append | statements per append | commits per append |');
console.log('|---|---|---|---|---|---|---|---|---|');
const builds: [string, Open][] = [];
const self = await openerOf(ROOT);
const base = BASELINE ? await openerOf(BASELINE) : null;
for (let i = 0; i < PAIRS; i++) {
  if (base) builds.push(['baseline', base]);
  builds.push(['this', self]);
}
const pooled = new Map<string, { client: number; backend: number; n: number }>();
for (const [name, open] of builds) {
  const r = await runOnce(open);
  const p = pooled.get(name) ?? { client: 0, backend: 0, n: 0 };
  pooled.set(name, { client: p.client + r.clientUs * r.appends, backend: p.backend + r.backendUs * r.appends, n: p.n + r.appends });
  console.log(`| ${name} | ${(r.appends / r.seconds).toFixed(0)} | ${(r.events / r.seconds).toFixed(0)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.clientUs.toFixed(0)} µs | ${r.backendUs.toFixed(0)} µs | ${r.statements.toFixed(3)} | ${r.commits.toFixed(3)} |`);
}
for (const [name, p] of pooled) console.log(`${name}: pooled client CPU ${(p.client / p.n).toFixed(0)} µs, backend CPU ${(p.backend / p.n).toFixed(0)} µs per append`);
console.log(`load average at end: ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
process.exit(0);
