/**
 * What the long holds of a host's event loop are made of: lays the holds recorded by
 * `bench/support/loop-holds-probe.mjs` over the `--cpu-prof` profile of the same process and sorts the samples that
 * fall inside them by what runs (GC, the admissions, the turns, the store's commit, the HTTP parse, the responses'
 * writes, …), beside the same shares over the whole measured window. The GC entries of the holds are summed too.
 *
 *   BENCH_CPU_PROF=/tmp/p BENCH_HOLDS=/tmp/p BENCH_NODE_ARGS=--cpu-prof-interval=100 BENCH_ONLY="JSONL, 1 host, durable:false" npx tsx bench/host-http.ts
 *   npx tsx bench/loop-holds.ts /tmp/p [--long 20] [--reading 3] [--top 25]
 *
 * `--long` (ms): the holds reported (default 20); `--reading`: which SIGUSR2 reading of the probe is the measured
 * window (default 3, the fourth: `bench/host-http.ts` signals at the start, after the idle second, when the window
 * opens and when it closes).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { argOf } from './support/bench-args.js';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: number[];
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly startTime: number;
  readonly samples: number[];
  readonly timeDeltas: number[];
}
interface Reading {
  readonly runs: number;
  readonly holds: [number, number, number, number][];
  readonly gcs: [number, number, number][];
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: npx tsx bench/loop-holds.ts <dir> [--long 20] [--reading 3] [--top 25]');
const LONG_US = Number(argOf('long', '20')) * 1000;
const READING = Number(argOf('reading', '3'));
const TOP = Number(argOf('top', '25'));

/** What a sample's stack runs, by the first rule that any of its frames matches (leaf first for the special nodes). */
const RULES: [string, (f: CallFrame) => boolean][] = [
  ['live snapshots (catch-ups)', (f) => f.url.includes('/runtime/live-snapshots')],
  ['store: JSONL commit', (f) => f.url.includes('/adapters/store/')],
  ['write-behind (window)', (f) => f.url.includes('/runtime/write-behind')],
  ['admission (session.prompt)', (f) => f.functionName === 'sessionPrompt' || f.url.includes('/host/session-prompt')],
  ['turns (runtime, echo model)', (f) => /\/runtime\/(agent|turn|model-step|runtime|inbox|tool-runner|hooks)\.js/.test(f.url) || f.url.includes('/echo/')],
  ['response write', (f) => f.functionName === 'responseViaResponseObject' || f.functionName === 'writev' || f.functionName === 'writevGeneric'],
  ['HTTP app (Hono, adapters/http)', (f) => f.url.includes('/adapters/http/') || f.url.includes('node_modules/hono') || f.url.includes('@hono/')],
  ['node HTTP parse / net', (f) => /node:(_http_|internal\/http|net|internal\/stream_base|_stream|internal\/streams)/.test(f.url) || f.functionName === 'parserOnHeadersComplete'],
  ['request log / stderr', (f) => f.url.includes('batched-lines') || f.url.includes('/runtime/logger')],
  ['probes', (f) => f.url.includes('/bench/support/')],
];
const SPECIAL: Record<string, string> = { '(garbage collector)': 'GC', '(idle)': 'idle', '(program)': '(program)', '(root)': '(program)' };

const categoryOf = (stack: CallFrame[]): string => {
  const leaf = stack[0]!;
  if (SPECIAL[leaf.functionName]) return SPECIAL[leaf.functionName]!;
  for (const [name, test] of RULES) if (stack.some(test)) return name;
  return 'other';
};

const files = readdirSync(dir);
for (const prof of files.filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const pid = prof.split('.')[3];
  const holdsFile = files.find((f) => f === `holds.${pid}.jsonl`);
  if (!holdsFile) continue;
  const readings = readFileSync(join(dir, holdsFile), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Reading);
  const reading = readings[READING];
  if (!reading) continue;
  const profile = JSON.parse(readFileSync(join(dir, prof), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackCache = new Map<number, { category: string; self: string }>();
  const infoOf = (id: number) => {
    let info = stackCache.get(id);
    if (!info) {
      const stack: CallFrame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
      const leaf = stack[0]!;
      info = { category: categoryOf(stack), self: `${leaf.functionName || '(anonymous)'} ${leaf.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${leaf.lineNumber + 1}` };
      stackCache.set(id, info);
    }
    return info;
  };
  // the measured window: from the first timer run after the reading before to the SIGUSR2 of this one; approximated
  // by the holds' and GC entries' span, widened to the samples between the earliest and latest of them
  const holds = reading.holds;
  // long: by the main thread's own time on a core (its work, not the machine's other processes), when known
  const long = holds.filter(([s, e, , core]) => (core > 0 ? core : e - s) >= LONG_US).sort((a, b) => a[0] - b[0]);
  // a sample's weight: the sampling interval (the median gap), not its gap: a thread waiting for a core is sampled
  // once when it runs again, and that gap is the machine's, not the code's
  const gaps = [...profile.timeDeltas].sort((a, b) => a - b);
  const interval = gaps[Math.floor(gaps.length / 2)]!;
  const windowStart = Math.min(...holds.map((h) => h[0]), ...reading.gcs.map((g) => g[0]));
  const windowEnd = Math.max(...holds.map((h) => h[1]), ...reading.gcs.map((g) => g[0] + g[1]));
  const focusStacks = new Map<string, number>();
  const focusKey = (id: number): string => {
    const names: string[] = [];
    for (let at: number | undefined = id; at !== undefined && names.length < 6; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (f.url.includes('/dist/')) names.push(`${f.functionName || '(anon)'}@${f.url.replace(/^.*\/dist\//, '')}`);
    }
    return names.join(' < ');
  };
  const all = new Map<string, number>();
  const inLong = new Map<string, number>();
  const selfLong = new Map<string, number>();
  const perHold = long.map(() => new Map<string, number>());
  let t = profile.startTime;
  let h = 0;
  let totalUs = 0;
  let longUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    const dt = Math.min(profile.timeDeltas[i + 1] ?? 0, interval);
    if (t < windowStart || t > windowEnd) continue;
    const { category, self } = infoOf(profile.samples[i]!);
    all.set(category, (all.get(category) ?? 0) + dt);
    totalUs += dt;
    while (h < long.length && long[h]![1] < t) h++;
    if (h < long.length && long[h]![0] <= t) {
      inLong.set(category, (inLong.get(category) ?? 0) + dt);
      selfLong.set(self, (selfLong.get(self) ?? 0) + dt);
      if (category === process.env['HOLDS_FOCUS']) {
        const key = focusKey(profile.samples[i]!);
        focusStacks.set(key, (focusStacks.get(key) ?? 0) + dt);
      }
      perHold[h]!.set(category, (perHold[h]!.get(category) ?? 0) + dt);
      longUs += dt;
    }
  }
  const gcIn = (s: number, e: number) => reading.gcs.filter(([gs, gd]) => gs < e && gs + gd > s);
  const kindName = (k: number) => (k === 1 ? 'scavenge' : k === 4 ? 'mark-compact' : k === 8 ? 'incremental' : k === 16 ? 'weak cb' : `kind ${k}`);
  const pct = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(1)} %`;
  const gcCount = new Map<string, { n: number; us: number; max: number }>();
  for (const [, d, k] of reading.gcs) {
    const g = gcCount.get(kindName(k)) ?? { n: 0, us: 0, max: 0 };
    gcCount.set(kindName(k), { n: g.n + 1, us: g.us + d, max: Math.max(g.max, d) });
  }
  console.log(`\n## ${prof} (pid ${pid})`);
  console.log(`window ${((windowEnd - windowStart) / 1e6).toFixed(2)} s, ${reading.runs} runs of the 1 ms timer, holds ≥ 10 ms (wall or main thread): ${holds.length}, main thread ≥ ${LONG_US / 1000} ms: ${long.length} (${pct(long.length, reading.runs)} of the runs)`);
  console.log(`GC entries: ${[...gcCount].map(([k, g]) => `${k} ${g.n}× (${(g.us / 1000).toFixed(1)} ms, longest ${(g.max / 1000).toFixed(1)} ms)`).join(', ')}`);
  const longGc = long.reduce((a, [s, e]) => a + gcIn(s, e).reduce((b, [, d]) => b + d, 0), 0);
  console.log(`in the holds of ≥ ${LONG_US / 1000} ms of the main thread's time on a core: ${(long.reduce((a, [s, e]) => a + e - s, 0) / 1000).toFixed(0)} ms of wall time, ${(long.reduce((a, x) => a + x[2], 0) / 1000).toFixed(0)} ms of the process's CPU, ${(long.reduce((a, x) => a + x[3], 0) / 1000).toFixed(0)} ms of the main thread's, GC entries ${(longGc / 1000).toFixed(1)} ms`);
  console.log('| what | all samples of the window | samples in the long holds |');
  console.log('|---|---|---|');
  for (const k of [...new Set([...all.keys(), ...inLong.keys()])].sort((a, b) => (inLong.get(b) ?? 0) - (inLong.get(a) ?? 0)))
    console.log(`| ${k} | ${pct(all.get(k) ?? 0, totalUs)} | ${pct(inLong.get(k) ?? 0, longUs)} |`);
  const FOCUS = process.env['HOLDS_FOCUS'];
  if (FOCUS) {
    console.log(`the ${FOCUS} samples in the long holds, by stack (innermost 6 frames of dist/):`);
    for (const [k, us] of [...focusStacks].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${(us / 1000).toFixed(1).padStart(6)} ms  ${k}`);
  }
  console.log(`top self in the long holds:`);
  for (const [k, us] of [...selfLong].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${pct(us, longUs).padStart(7)}  ${k}`);
  console.log(`the long holds (wall ms · process CPU ms · main thread on a core ms · GC entries in them · what their samples ran, ms, at ${interval} µs a sample):`);
  long.forEach(([s, e, cpu, core], i) => {
    const gc = gcIn(s, e).map(([, d, k]) => `${kindName(k)} ${(d / 1000).toFixed(1)}`).join(', ');
    const what = [...perHold[i]!].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, us]) => `${k} ${(us / 1000).toFixed(1)}`).join(', ');
    console.log(`  ${((e - s) / 1000).toFixed(1)} · ${(cpu / 1000).toFixed(1)} · ${(core / 1000).toFixed(1)} · [${gc}] · ${what}`);
  });
}
