/**
 * The runtime end to end: turns/s and events/s of 1 session against 100 concurrent sessions, for 1-step turns (a
 * text reply) and 3-step turns (two tool rounds, then text), on the memory store, the JSONL store with its default
 * options (group commit, acknowledged after fsync) and PostgreSQL. Every step awaits the durability of what came
 * before it (fail closed), so on a durable store one session's turn rate is bounded by the flush latency; concurrent
 * sessions share flushes. Each session runs one warm-up turn before the clock starts (its stream then exists: only
 * steady-state turns are timed). Rounds alternate 1 and 100 sessions; medians reported.
 *
 *   npx tsx bench/runtime-sessions.ts [--seconds 2] [--rounds 2] [--sessions 100] [--no-postgres]
 *     [--stores memory,jsonl,postgres] [--shapes 1-step,3-step] [--only-many]
 *
 * Each row also gives the process's CPU time (user + system, `process.cpuUsage`) per turn, and every round's
 * turns/s after the median. `--only-many` runs only the 100-session case (for a profile: `node --cpu-prof --import
 * tsx bench/runtime-sessions.ts --stores jsonl --shapes 1-step --only-many --rounds 1`).
 *
 * The JSONL store lives in a temp dir (BENCH_DIR or the OS's), deleted at the end; PostgreSQL (PG_URL, default
 * postgres://postgres@127.0.0.1:5432/test) gets a schema of its own, dropped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { openPostgresEventStore } from '../adapters/store/postgres/index.js';
import { createUserMessage } from '../domain/message.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { ModelRequest } from '../runtime/ports/model.js';
import { createRuntime } from '../runtime/runtime.js';
import { silentLogger } from '../runtime/logger.js';
import { fmt, machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 2);
const ROUNDS = arg('rounds', 2);
const SESSIONS = arg('sessions', 100);
const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const list = (name: string, dflt: string): string[] => {
  const i = process.argv.indexOf(`--${name}`);
  return (i >= 0 ? process.argv[i + 1]! : dflt).split(',');
};
const STORES = list('stores', process.argv.includes('--no-postgres') ? 'memory,jsonl' : 'memory,jsonl,postgres');
const SHAPES = list('shapes', '1-step,3-step') as Shape[];
const ONLY_MANY = process.argv.includes('--only-many');

type Shape = '1-step' | '3-step';
/** Answers every request: for 3-step turns, a tool call at steps 1 and 2, text at step 3. */
const modelFor = (shape: Shape) =>
  new ScriptedModel([], {
    whenExhausted: (request: ModelRequest) =>
      shape === '3-step' && request.step < 3 ? { toolCalls: [{ callId: `c${request.turn}-${request.step}`, name: 'noop' }] } : 'done',
  });

interface Rate {
  readonly turns: number;
  readonly events: number;
  /** CPU time of the process (user + system) per turn, in microseconds. */
  readonly cpuPerTurn: number;
}

let sessionNo = 0;
const run = async (store: EventStore, shape: Shape, sessions: number): Promise<Rate> => {
  const model = modelFor(shape);
  const runtime = createRuntime({ store, model, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], logger: silentLogger });
  const agents = Array.from({ length: sessions }, () => runtime.createSession({ sessionId: `bench-${process.pid}-${sessionNo++}` }));
  // warm-up: each session runs one turn before the clock starts, so its stream exists (creating 100 stream files
  // is a cost of creating sessions, not of running turns) and only steady-state turns are timed
  await Promise.all(
    agents.map(async (agent) => {
      agent.followup(createUserMessage('warm-up'));
      await agent.whenIdle();
    }),
  );
  const eventsBefore = agents.reduce((n, a) => n + a.events.length, 0);
  let turns = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = start + SECONDS * 1000;
  await Promise.all(
    agents.map(async (agent) => {
      while (performance.now() < deadline) {
        agent.followup(createUserMessage('go'));
        await agent.whenIdle();
        turns++;
        // the scripted model records every request (each with a copy of the conversation so far, for tests): dropped
        // as the run goes, so that the fixture's memory does not grow with the square of the turns
        if (model.requests.length > 256) model.requests.length = 0;
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const events = agents.reduce((n, a) => n + a.events.length, 0) - eventsBefore;
  await Promise.all(agents.map((a) => a.dispose()));
  return { turns: turns / elapsed, events: events / elapsed, cpuPerTurn: (used.user + used.system) / turns };
};

const dir = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-runtime-bench-'));
const schema = `bench_runtime_${process.pid}`;
try {
  console.log(`machine: ${machineLine()}`);
  console.log(`date: ${new Date().toISOString()}; ${SECONDS} s per case, ${ROUNDS} interleaved rounds, medians`);
  const stores: [string, string, () => Promise<EventStore>][] = [
    ['memory', 'memory', async () => new MemoryEventStore()],
    ['jsonl', 'JSONL (default: group commit, fsync)', async () => openJsonlEventStore(join(dir, 'jsonl'))],
    ['postgres', 'PostgreSQL', async () => openPostgresEventStore({ connectionString: PG_URL, schema })],
  ];
  console.log(
    `${'store'.padEnd(38)} ${'turn'.padEnd(7)} ${'sessions'.padStart(8)} ${'turns/s'.padStart(10)} ${'events/s'.padStart(10)} ${'CPU µs/turn'.padStart(12)}   ratio; every round's turns/s`,
  );
  for (const [, name, open] of stores.filter(([k]) => STORES.includes(k))) {
    const store = await open();
    try {
      for (const shape of SHAPES) {
        const one: Rate[] = [];
        const many: Rate[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          if (ONLY_MANY) many.push(await run(store, shape, SESSIONS));
          else if (r % 2 === 0) {
            one.push(await run(store, shape, 1));
            many.push(await run(store, shape, SESSIONS));
          } else {
            many.push(await run(store, shape, SESSIONS));
            one.push(await run(store, shape, 1));
          }
        }
        const m = (rs: Rate[], k: keyof Rate) => median(rs.map((x) => x[k]));
        const row = (rs: Rate[], sessions: number, tail: string) =>
          console.log(
            `${name.padEnd(38)} ${shape.padEnd(7)} ${String(sessions).padStart(8)} ${fmt(m(rs, 'turns')).padStart(10)} ${fmt(m(rs, 'events')).padStart(10)} ${fmt(m(rs, 'cpuPerTurn')).padStart(12)}   ${tail}(${rs.map((x) => fmt(x.turns)).join(', ')})`,
          );
        if (one.length > 0) row(one, 1, '');
        row(many, SESSIONS, one.length > 0 ? `${(m(many, 'turns') / m(one, 'turns')).toFixed(1)}x the turns/s of one session ` : '');
      }
    } finally {
      await store.close();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (STORES.includes('postgres')) {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}
