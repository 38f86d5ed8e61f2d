/**
 * What the ratio targets of the audit commands and the projections can be at best on this machine: the work none
 * of them can skip, each part timed alone in one process, side by side in interleaved rounds (medians), and the
 * lowest wall time any design could reach with it. The parts, over one generated chained session log (10,000
 * pending at the peak, bench/support/session-log.ts):
 *
 *   P   read the file and JSON.parse every line (the floor `bench/audit-commands.ts` compares with, without the process start)
 *   V   check every parsed line as an event (parseEvent: the audit and `why` refuse what is not one)
 *   C   recompute every event's chain hash (SHA-256 of RFC 8785 text) and compare with the stored one (`audit`, `verify`)
 *   F   the plain session fold over the checked events (stepSession alone: the audit also folds message facts, so
 *       this is less than it does)
 *   Ps  read the JSONL store's stream file of the same session and JSON.parse every line (what any projection over
 *       that store must do before it folds)
 *
 * The bounds assume a perfect design: no start-up beyond a bare `node`, no output, no garbage collection, perfect
 * load balance, and threads that cost nothing to start or to talk to. One constraint is kept because JavaScript
 * has it: threads share no objects, so the thread that folds parses every line itself (a copy sent from another
 * thread costs a serialization and a deserialization, no less than the parse), and a thread that checks a part of
 * the log off the folding thread parses that part too. With a fraction x of V and y of C done off the folding
 * thread (on the other k-1 cores, which parse the larger of the two fractions once):
 *
 *   folding thread   P + F + (1-x)·V + (1-y)·C
 *   other threads    max(x, y)·P + x·V + y·C
 *   wall ≥ start + max(folding thread, (both) / k)            minimised over x, y in [0, 1]
 *
 * `verify` needs no fold: wall ≥ start + (P + C) / k. A projection folds on the thread that subscribes: its events/s
 * are at most N / (Ps + F), that is F / (Ps + F) of the plain fold's.
 *
 * The parts are timed inside one streaming pass over the log, a batch of lines at a time, as the commands read it
 * (each part of each batch timed on its own; nothing is kept but the fold's state), so each part pays the garbage
 * it makes and the heap stays as small as the commands'.
 *
 * Each bound is divided by the floor's own wall time (a spawned `node bench/support/parse-lines.mjs`, measured in
 * the same rounds); `start` is a spawned bare `node -e 0`. Every part's answer is checked: the chain ends on the last
 * line's hash, the fold ends with the plain-array model's lists, the store's lines are the log's events.
 *
 *   npm run build && node --expose-gc --import tsx bench/audit-bound.ts [--events 200000] [--rounds 3] [--peak 10000]
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { readLineBatches } from '../audit/read-lines.js';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { chainInputOf, GENESIS_HASH } from '../domain/event-chain.js';
import type { LogEvent } from '../domain/events.js';
import { parseEvent } from '../domain/parse-event.js';
import { initialSessionState, stepSession } from '../domain/session-fold.js';
import { sha256ChainHash } from '../runtime/chain-hash.js';
import { fmt, machineLine, median } from './support/machine.js';
import { expectSameLists, listsOf, writeSessionLog } from './support/session-log.js';
import { spawnMeasured } from './support/spawn-measure.js';

const { values: flags } = parseArgs({
  options: { events: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' }, peak: { type: 'string', default: '10000' } },
});
const EVENTS = Number(flags.events);
const ROUNDS = Number(flags.rounds);
const PEAK = Number(flags.peak);
const CORES = availableParallelism();
const STREAM = 'bench-session';
const floorScript = join(import.meta.dirname, 'support', 'parse-lines.mjs');
const gc = (globalThis as { gc?: () => void }).gc;

/** The seconds `work` takes (after a full GC when node runs with --expose-gc, so one part does not pay for another's garbage). */
const seconds = async <T>(work: () => T | Promise<T>): Promise<{ s: number; value: T }> => {
  gc?.();
  const t = performance.now();
  const value = await work();
  return { s: (performance.now() - t) / 1000, value };
};

/** How many lines of `file` JSON.parse took, each value dropped once parsed: exactly the floor's work. */
const countParsed = async (file: string): Promise<number> => {
  let lines = 0;
  for await (const batch of readLineBatches(file)) {
    for (const line of batch) {
      JSON.parse(line);
      lines++;
    }
  }
  return lines;
};

/** The lowest wall time of a design that folds on one thread (see the header), over a grid of x and y. */
const foldingBound = (p: { P: number; V: number; C: number; F: number }, cores: number): number => {
  let best = Infinity;
  const steps = 100;
  for (let i = 0; i <= steps; i++) {
    for (let j = 0; j <= steps; j++) {
      const x = cores > 1 ? i / steps : 0;
      const y = cores > 1 ? j / steps : 0;
      const folding = p.P + p.F + (1 - x) * p.V + (1 - y) * p.C;
      const others = Math.max(x, y) * p.P + x * p.V + y * p.C;
      best = Math.min(best, Math.max(folding, (folding + others) / cores));
    }
  }
  return best;
};

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-audit-bound-'));
try {
  console.log(`machine: ${machineLine()}`);
  console.log(`date: ${new Date().toISOString()}`);
  const log = join(root, 'log.jsonl');
  const expected = await writeSessionLog(log, EVENTS, PEAK);
  const lines = expected.events ?? EVENTS;

  // the same session in a JSONL store (its stream file is what a projection reads), imported a batch at a time
  const storeDir = join(root, 'store');
  const store = await openJsonlEventStore(storeDir, { durability: 'none' });
  const ids: string[] = [];
  let lastHash = '';
  let batch: LogEvent[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await store.append(STREAM, batch.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), ids.length === batch.length ? 'no_stream' : BigInt(ids.length - batch.length - 1));
    batch = [];
  };
  for await (const lineBatch of readLineBatches(log)) {
    for (const line of lineBatch) {
      const e = JSON.parse(line) as LogEvent;
      ids.push(e.id);
      lastHash = e.hash!;
      batch.push(e);
      if (batch.length === 2000) await flush();
    }
  }
  await flush();
  await store.close();
  const streamFiles = readdirSync(join(storeDir, 'streams'));
  if (streamFiles.length !== 1) throw new Error(`expected one stream file in the store, found ${streamFiles.length}`);
  const streamFile = join(storeDir, 'streams', streamFiles[0]!);
  console.log(`log: ${fmt(lines)} events, peak ${fmt(PEAK)} pending; ${CORES} cores\n`);

  const parts = { P: [] as number[], V: [] as number[], C: [] as number[], F: [] as number[], Ps: [] as number[], floor: [] as number[], start: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const floor = await spawnMeasured([floorScript, log]);
    if ((JSON.parse(floor.stdout) as { lines: number }).lines !== lines) throw new Error('the floor miscounted');
    parts.floor.push(floor.seconds);
    parts.start.push((await spawnMeasured(['-e', '0'])).seconds);

    // One streaming pass, as the commands read (a batch of lines at a time, nothing kept but the fold's state), each
    // part of each batch timed on its own: the heap stays as small as theirs, and each part pays the garbage it makes.
    gc?.();
    const t = { P: 0, V: 0, C: 0, F: 0 };
    let seq = 0;
    let prev = GENESIS_HASH;
    let state = initialSessionState();
    for await (const lineBatch of readLineBatches(log)) {
      let t0 = performance.now();
      const raws = lineBatch.map((line) => JSON.parse(line) as unknown);
      let t1 = performance.now();
      t.P += t1 - t0;
      t0 = t1;
      // the chain first, on the values as parsed (as the audit does: parseEvent then freezes them in place)
      for (const raw of raws as LogEvent[]) {
        const hash = sha256ChainHash(chainInputOf(STREAM, raw, prev));
        if (hash !== raw.hash) throw new Error(`chain: seq ${raw.seq} does not hash to its stored hash`);
        prev = hash;
      }
      t1 = performance.now();
      t.C += t1 - t0;
      t0 = t1;
      const events = raws.map((raw) => {
        const e = parseEvent(raw, { expectedSeq: seq++, owned: true });
        if (E.isLeft(e)) throw e.left;
        return e.right;
      });
      t1 = performance.now();
      t.V += t1 - t0;
      t0 = t1;
      for (const e of events) {
        const step = stepSession(state, e);
        if (E.isLeft(step)) throw step.left;
        state = step.right.state;
      }
      t.F += performance.now() - t0;
    }
    if (seq !== lines || prev !== lastHash) throw new Error('chain: does not end on the last line');
    expectSameLists('the fold vs the plain-array model', listsOf(state.inbox), expected);
    for (const k of ['P', 'V', 'C', 'F'] as const) parts[k].push(t[k] / 1000);

    const stored = await seconds(() => countParsed(streamFile));
    parts.Ps.push(stored.s);
    if (stored.value !== lines + 1) throw new Error('Ps miscounted (the header and the events)');
  }
  // the store's stream file holds the log's events, in order
  let at = 0;
  for await (const lineBatch of readLineBatches(streamFile)) {
    for (const line of lineBatch) {
      const l = JSON.parse(line) as { e?: { id: string } };
      if (l.e !== undefined && l.e.id !== ids[at++]) throw new Error(`store: event ${at - 1} of its stream file is not the log's`);
    }
  }
  if (at !== lines) throw new Error('store: its stream file is not the log');

  const m = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, median(v)])) as Record<keyof typeof parts, number>;
  const row = (name: string, k: keyof typeof parts, what: string) =>
    console.log(`${name.padEnd(4)} ${m[k].toFixed(3).padStart(7)} s   ${what}   (${parts[k].map((x) => x.toFixed(3)).join(', ')})`);
  row('P', 'P', 'read + JSON.parse every line (in process)');
  row('V', 'V', 'parseEvent every line');
  row('C', 'C', 'chain hash of every event, compared');
  row('F', 'F', 'plain session fold (stepSession)');
  row('Ps', 'Ps', "read + JSON.parse the JSONL store's stream file");
  row('W', 'floor', 'the floor, spawned (node bench/support/parse-lines.mjs)');
  row('S', 'start', 'a bare node start, spawned (node -e 0)');

  const ratio = (wall: number) => wall / m.floor;
  const reach = (r: number, target: number) => `${r <= target ? 'reachable' : 'out of reach'} (<= ${target}x)`;
  // the same parts on more cores: what a machine with more of them (and the same speed per core) would allow
  for (const cores of [...new Set([CORES, 4, 8])].sort((a, b) => a - b)) {
    const audit = m.start + foldingBound(m, cores);
    const why = m.start + foldingBound({ ...m, C: 0 }, cores);
    const verify = m.start + (m.P + m.C) / cores;
    console.log(`\nlowest wall time any design reaches on ${cores} cores${cores === CORES ? ' (this machine)' : ''}, as a multiple of the floor:`);
    console.log(`audit   ${audit.toFixed(3)} s = ${ratio(audit).toFixed(2)}x   ${reach(ratio(audit), 2)}, ${reach(ratio(audit), 1.5)}`);
    console.log(`why     ${why.toFixed(3)} s = ${ratio(why).toFixed(2)}x   ${reach(ratio(why), 1.5)}`);
    console.log(`verify  ${verify.toFixed(3)} s = ${ratio(verify).toFixed(2)}x   ${reach(ratio(verify), 1.5)}`);
  }
  const projection = m.F / (m.Ps + m.F);
  console.log(`\nprojection over the JSONL store, on any number of cores: at most ${projection.toFixed(2)}x the plain fold's events/s   ${projection >= 0.5 ? 'reachable' : 'out of reach'} (>= 0.5x)`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
