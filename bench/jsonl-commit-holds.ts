/**
 * How long one JSONL group commit holds the event loop: 32 streams (`BENCH_STREAMS`) append a batch of 37 checked splice events each
 * (as a host's write-behind windows do when they expire together), one group per round; per round, the longest CPU
 * time of the process between two runs of a 1 ms timer (its own work's hold) and the timer's longest lateness.
 *
 *   npx tsx bench/jsonl-commit-holds.ts [commitSliceMs]     # default: the store's default (2 ms); Infinity: no slices
 *
 * Env: BENCH_STREAMS (32), BENCH_PER (events per stream, 37), BENCH_ROUNDS (30; the first 5 are warm-up).
 * `BENCH_STREAMS=1 BENCH_PER=2000`: one large append per group (a long turn's batch), cut between its events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { checkedEvent } from '../runtime/ports/checked-events.js';
import { eventSizeOfJson } from '../runtime/ports/store-validation.js';
import type { NewEvent } from '../runtime/ports/event-store.js';
import { deepFreeze } from '../domain/json.js';
import { median } from './support/machine.js';

const slice = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
const STREAMS = Number(process.env['BENCH_STREAMS'] ?? 32);
const PER = Number(process.env['BENCH_PER'] ?? 37);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 30);
const WARMUP = 5;
const dir = mkdtempSync(join(tmpdir(), 'steerlog-commit-holds-'));
const store = await openJsonlEventStore(dir, slice === undefined ? {} : { commitSliceMs: slice });
let n = 0;
/** A splice of one prompt, marked as the session log marks the events it built. */
const event = (s: number): NewEvent => {
  const id = `01JD${(n++).toString().padStart(8, '0')}abcdefghijklmn`;
  const data = deepFreeze({ target: 'next-turn', removedAt: 0, removedCount: 0, inserted: [{ id: `m${n}`, role: 'user', content: [{ type: 'text', text: `r1-c${s}-${n}` }], source: { kind: 'user', rpcId: 'b', actor: { kind: 'user', id: 'local' } } }], insertedAt: 17 });
  const metadata = deepFreeze({ actor: 'user:local' });
  const dataJson = JSON.stringify(data);
  const type = 'agent/inbox/spliced';
  return checkedEvent({ id, type, time: Date.now(), data, metadata, hash: `sha256:${'a'.repeat(64)}` }, { dataJson, size: eventSizeOfJson(dataJson, { id, type, metadata }) });
};
const next: number[] = new Array<number>(STREAMS).fill(-1);
const histogram = monitorEventLoopDelay({ resolution: 1 });
let maxLate = 0;
let maxHeld = 0;
let lastWall = performance.now();
let lastCpu = process.cpuUsage();
const timer = setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage();
  maxHeld = Math.max(maxHeld, Math.min((cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000, now - lastWall));
  maxLate = Math.max(maxLate, now - lastWall - 1);
  lastCpu = cpu;
  lastWall = now;
}, 1);
const lates: number[] = [];
const helds: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const batches = Array.from({ length: STREAMS }, (_, s) => Array.from({ length: PER }, () => event(s)));
  await new Promise((res) => setTimeout(res, 5));
  maxLate = 0;
  maxHeld = 0;
  lastWall = performance.now();
  lastCpu = process.cpuUsage();
  if (r === WARMUP) histogram.enable();
  await Promise.all(
    batches.map(async (batch, s) => {
      const result = await store.append(`s${s}`, batch, next[s]! < 0 ? 'no_stream' : BigInt(next[s]!));
      next[s] = Number(result.nextExpectedRevision);
    }),
  );
  await new Promise((res) => setTimeout(res, 3));
  if (r >= WARMUP) {
    lates.push(maxLate);
    helds.push(maxHeld);
  }
}
clearInterval(timer);
const fmt = (x: number): string => x.toFixed(1);
console.log(
  `commitSliceMs ${slice ?? 'default'}: ${ROUNDS - WARMUP} groups of ${STREAMS} × ${PER} events: CPU-held per group p50 ${fmt(median(helds))} max ${fmt(Math.max(...helds))} ms; ` +
    `timer lateness per group p50 ${fmt(median(lates))} max ${fmt(Math.max(...lates))} ms; loop delay p99 ${fmt(histogram.percentile(99) / 1e6 - 1)} ms`,
);
await store.close();
rmSync(dir, { recursive: true, force: true });
