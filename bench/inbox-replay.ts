/**
 * Replays inbox logs of 1,000,000 and 2,000,000 splices (10,000 pending items at the peak) through steerlog's
 * reducer and through a naive copy-on-every-splice reducer, in one run. Prints events/s, peak heap and the ratios.
 *   node --expose-gc --import tsx bench/inbox-replay.ts [--events 1000000] [--peak 10000]
 */
import { evolveInbox } from '../domain/inbox/inbox-evolve.js';
import { initialInboxState, pendingCount } from '../domain/inbox/inbox-state.js';
import type { InboxSplicedData } from '../domain/events.js';
import { buildInboxLog, naiveEvolve, type NaiveInbox } from './support/inbox-log.js';
import { fmt, machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const EVENTS = arg('events', 1_000_000);
const PEAK = arg('peak', 10_000);
const RUNS = arg('runs', 5);
const gc = (globalThis as { gc?: () => void }).gc;

interface Result {
  readonly seconds: number;
  readonly peakHeapMiB: number;
  readonly finalPending: number;
}

const measure = <S>(log: readonly InboxSplicedData[], init: () => S, step: (s: S, e: InboxSplicedData) => S, count: (s: S) => number): Result => {
  gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const t0 = performance.now();
  let state = init();
  for (let i = 0; i < log.length; i++) {
    state = step(state, log[i]!);
    if ((i & 0x3fff) === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  const seconds = (performance.now() - t0) / 1000;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  return { seconds, peakHeapMiB: (peak - base) / 2 ** 20, finalPending: count(state) };
};

const steerlog = (log: readonly InboxSplicedData[]) => measure(log, initialInboxState, evolveInbox, pendingCount);
const naive = (log: readonly InboxSplicedData[]) =>
  measure<NaiveInbox>(log, () => ({ nextTurn: [], nextStep: [] }), naiveEvolve, (s) => s.nextTurn.length + s.nextStep.length);


console.log(`machine: ${machineLine()}`);
if (!gc) console.log('(run with node --expose-gc for stable heap figures)');
const log1 = buildInboxLog(EVENTS, PEAK);
const log2 = buildInboxLog(EVENTS * 2, PEAK);
console.log(`logs: ${fmt(log1.length)} and ${fmt(log2.length)} splices, peak ${fmt(PEAK)} pending`);

// warm-up: let the JIT settle before timing, then interleave the 1M and 2M runs so both see the same machine
steerlog(log1);
steerlog(log1);
const r1: Result[] = [];
const r2: Result[] = [];
for (let i = 0; i < RUNS; i++) {
  r1.push(steerlog(log1));
  r2.push(steerlog(log2));
}
const medianOf = (rs: Result[]): Result => {
  const t = median(rs.map((r) => r.seconds));
  return { ...rs.find((r) => r.seconds === t)!, peakHeapMiB: Math.max(...rs.map((r) => r.peakHeapMiB)) };
};
const s1 = medianOf(r1);
const s2 = medianOf(r2);
const n1 = naive(log1);
if (s1.finalPending !== n1.finalPending) throw new Error(`reducers disagree: ${s1.finalPending} vs ${n1.finalPending} pending`);

const row = (name: string, events: number, r: Result) =>
  console.log(`${name.padEnd(28)} ${fmt(events / r.seconds).padStart(12)} events/s  ${r.seconds.toFixed(3).padStart(8)} s  peak heap +${r.peakHeapMiB.toFixed(1)} MiB`);
row('steerlog, 1M', log1.length, s1);
row('steerlog, 2M', log2.length, s2);
row('naive copy-on-splice, 1M', log1.length, n1);
console.log(`speed-up over naive at ${fmt(PEAK)} pending: ${(n1.seconds / s1.seconds).toFixed(1)}x (target >= 20x)`);
console.log(`time ratio 2M / 1M: ${(s2.seconds / s1.seconds).toFixed(2)} (target <= 2.3; medians of ${RUNS} interleaved runs: ${r1.map((r) => r.seconds.toFixed(3)).join(', ')} s vs ${r2.map((r) => r.seconds.toFixed(3)).join(', ')} s)`);
