/**
 * What users run, on session logs with 10,000 pending items at the peak (bench/support/session-log.ts), measured side
 * by side in one run, in interleaved rounds, reporting medians; every comparison checks that both sides end with
 * identical pending lists (the ids, in order), so a fast wrong answer cannot pass.
 *
 *   1. `steerlog audit <log> --json`, spawned (the built CLI, dist/), against the floor: a spawned process that reads
 *      the same file and JSON.parses every line (bench/support/parse-lines.mjs) — at N and 2N events, with the peak
 *      RSS of each process (GNU time).
 *   2. The same N-event session in the JSONL store: the plain session fold (stepSession over the parsed events in
 *      memory) against `fromStream(store, s)` piped through `queueView()` and through `historyClassification()`.
 *   3. Resuming that stored session (`runtime.resume`, until the agent is ready) against the audit's time.
 *
 *   npm run build && node --expose-gc --import tsx bench/whole-path.ts [--events 1000000] [--rounds 3] [--peak 10000]
 *     [--no-2n] [--audit-only] [--projections-only] [--baseline <another build's bin/steerlog.js>]
 *
 * --baseline adds a third side to part 1: the same audit by another build (e.g. the commit before a change), in the
 * same interleaved rounds, so a before/after comparison sees the same machine. --audit-only stops after part 1;
 * --projections-only runs part 2 alone (no audit, no resume).
 *
 * The logs (about 230 bytes an event) and the store go to a temp dir (BENCH_DIR or the OS's), deleted at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { last, lastValueFrom, takeWhile } from 'rxjs';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import type { AuditReport } from '../domain/audit.js';
import type { LogEvent } from '../domain/events.js';
import type { MessageClass } from '../domain/history-classification.js';
import { parseLogLine } from '../domain/parse-event.js';
import { initialSessionState, stepSession, type SessionState } from '../domain/session-fold.js';
import { eventsOnly, fromStream, historyClassification, parseRecorded, queueView } from '../projections/index.js';
import { createRuntime } from '../runtime/runtime.js';
import { readLineBatches } from '../audit/read-lines.js';
import { fmt, machineLine, median } from './support/machine.js';
import { expectSameLists, listsOf, writeSessionLog, type FinalLists } from './support/session-log.js';
import { spawnMeasured, type Spawned } from './support/spawn-measure.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const EVENTS = arg('events', 1_000_000);
const ROUNDS = arg('rounds', 3);
const PEAK = arg('peak', 10_000);
const SKIP_2N = process.argv.includes('--no-2n');
const AUDIT_ONLY = process.argv.includes('--audit-only');
const PROJECTIONS_ONLY = process.argv.includes('--projections-only');
const baselineAt = process.argv.indexOf('--baseline');
const BASELINE = baselineAt >= 0 ? process.argv[baselineAt + 1]! : null;
const gc = (globalThis as { gc?: () => void }).gc;

/** The CPU seconds (user + system) of this process of the last `seconds` call: less disturbed than wall time by a busy machine. */
let lastCpu = 0;
const seconds = async (fn: () => Promise<unknown> | unknown): Promise<number> => {
  const t = performance.now();
  const c = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(c);
  lastCpu = (used.user + used.system) / 1e6;
  return (performance.now() - t) / 1000;
};
const cli = join(import.meta.dirname, '..', 'bin', 'steerlog.js');
const floor = join(import.meta.dirname, 'support', 'parse-lines.mjs');

/** Thrown to skip parts 2 and 3 (--audit-only), caught below so the temp dir is still removed. */
const AUDIT_DONE = Symbol('audit only');
const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-whole-path-'));
try {
  console.log(`machine: ${machineLine()}`);
  console.log(`date: ${new Date().toISOString()}`);
  const log1 = join(root, 'n.jsonl');
  const log2 = join(root, '2n.jsonl');
  let t = performance.now();
  const expected1 = await writeSessionLog(log1, EVENTS, PEAK);
  const expected2 = SKIP_2N || PROJECTIONS_ONLY ? expected1 : await writeSessionLog(log2, EVENTS * 2, PEAK);
  console.log(`logs: ${fmt(EVENTS)}${SKIP_2N || PROJECTIONS_ONLY ? '' : ` and ${fmt(EVENTS * 2)}`} events, peak ${fmt(PEAK)} pending, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // ---- 1. the audit end to end vs the parse floor ---------------------------------------------------------------
  const runs: Record<'parse1' | 'audit1' | 'parse2' | 'audit2' | 'base1' | 'base2', Spawned[]> = { parse1: [], audit1: [], parse2: [], audit2: [], base1: [], base2: [] };
  const checkAudit = (r: Spawned, expected: FinalLists, events: number): void => {
    const report = JSON.parse(r.stdout) as AuditReport;
    if (!report.ok || report.events !== events) throw new Error(`audit failed: ${JSON.stringify(report.errors)}`);
    expectSameLists('audit vs the plain-array model', { nextTurn: report.inbox.nextTurn, nextStep: report.inbox.nextStep }, expected);
  };
  for (let r = 0; r < (PROJECTIONS_ONLY ? 0 : ROUNDS); r++) {
    const sides: ('parse' | 'audit' | 'base')[] = BASELINE ? ['parse', 'audit', 'base'] : ['parse', 'audit'];
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const size of SKIP_2N ? ([1] as const) : ([1, 2] as const)) {
      for (const what of order) {
        const file = size === 1 ? log1 : log2;
        const res = what === 'parse' ? await spawnMeasured([floor, file]) : await spawnMeasured([what === 'audit' ? cli : BASELINE!, 'audit', file, '--json']);
        const expected = size === 1 ? expected1 : expected2;
        if (what !== 'parse') {
          checkAudit(res, expected, expected.events!);
          // the baseline and this build must print the very same report
          const other = runs[`${what === 'audit' ? 'base' : 'audit'}${size}`][r];
          if (other !== undefined && other.stdout !== res.stdout) throw new Error(`audit --json output differs from the baseline's at ${size}N`);
        } else if ((JSON.parse(res.stdout) as { lines: number }).lines !== expected.events) throw new Error('parse floor miscounted');
        runs[`${what}${size}`].push(res);
      }
    }
  }
  const med = (rs: Spawned[]) => median(rs.map((x) => x.seconds));
  const cpu = (rs: Spawned[]) => median(rs.map((x) => x.cpuSeconds));
  const peak = (rs: Spawned[]) => Math.max(...rs.map((x) => x.peakRssMiB));
  const row = (name: string, events: number, rs: Spawned[]) =>
    console.log(
      `${name.padEnd(40)} ${med(rs).toFixed(2).padStart(7)} s  ${fmt(events / med(rs)).padStart(10)} ev/s  CPU ${cpu(rs).toFixed(2).padStart(6)} s  peak RSS ${peak(rs).toFixed(0).padStart(4)} MiB   (wall ${rs.map((x) => x.seconds.toFixed(2)).join(', ')}; CPU ${rs.map((x) => x.cpuSeconds.toFixed(2)).join(', ')})`,
    );
  if (!PROJECTIONS_ONLY) {
    console.log('');
    row(`parse floor, ${fmt(EVENTS)}`, EVENTS, runs.parse1);
    row(`steerlog audit --json, ${fmt(EVENTS)}`, EVENTS, runs.audit1);
    if (!SKIP_2N) {
      row(`parse floor, ${fmt(EVENTS * 2)}`, EVENTS * 2, runs.parse2);
      row(`steerlog audit --json, ${fmt(EVENTS * 2)}`, EVENTS * 2, runs.audit2);
    }
    if (BASELINE) {
      row(`baseline audit --json, ${fmt(EVENTS)}`, EVENTS, runs.base1);
      if (!SKIP_2N) row(`baseline audit --json, ${fmt(EVENTS * 2)}`, EVENTS * 2, runs.base2);
      console.log(`baseline (${BASELINE}) / parse floor at ${fmt(EVENTS)}: ${(med(runs.base1) / med(runs.parse1)).toFixed(2)}x wall, ${(cpu(runs.base1) / cpu(runs.parse1)).toFixed(2)}x CPU; this build's audit takes ${(med(runs.audit1) / med(runs.base1)).toFixed(2)}x the baseline's wall time, ${(cpu(runs.audit1) / cpu(runs.base1)).toFixed(2)}x its CPU time`);
    }
    console.log(`audit / parse floor at ${fmt(EVENTS)}: ${(med(runs.audit1) / med(runs.parse1)).toFixed(2)}x wall, ${(cpu(runs.audit1) / cpu(runs.parse1)).toFixed(2)}x CPU (target <= 2)`);
    if (!SKIP_2N) {
      console.log(`audit / parse floor at ${fmt(EVENTS * 2)}: ${(med(runs.audit2) / med(runs.parse2)).toFixed(2)}x wall, ${(cpu(runs.audit2) / cpu(runs.parse2)).toFixed(2)}x CPU`);
      console.log(`audit time 2N / N: ${(med(runs.audit2) / med(runs.audit1)).toFixed(2)} wall, ${(cpu(runs.audit2) / cpu(runs.audit1)).toFixed(2)} CPU (target <= 2.2); peak RSS ${peak(runs.audit1).toFixed(0)} -> ${peak(runs.audit2).toFixed(0)} MiB (target <= 150, flat)`);
    }
  }
  rmSync(log2, { force: true });
  if (AUDIT_ONLY) throw AUDIT_DONE;

  // ---- 2. projections over the JSONL store vs the plain fold -----------------------------------------------------
  const events: LogEvent[] = [];
  for await (const batch of readLineBatches(log1)) {
    for (const line of batch) {
      const p = parseLogLine(line, { expectedSeq: events.length });
      if (E.isLeft(p)) throw p.left;
      events.push(p.right);
    }
  }
  const store = await openJsonlEventStore(join(root, 'store'), { durability: 'none' });
  t = performance.now();
  for (let i = 0; i < events.length; i += 2000) {
    await store.append('bench-session', events.slice(i, i + 2000).map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), BigInt(i) - 1n < 0n ? 'no_stream' : BigInt(i - 1));
  }
  console.log(`\nimported ${fmt(events.length)} events into a JSONL store in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const plain = (): FinalLists & { classes: MessageClass[] } => {
    let state = initialSessionState();
    const classes: MessageClass[] = [];
    for (const e of events) {
      const step = stepSession(state, e);
      if (E.isLeft(step)) throw step.left;
      state = step.right.state;
      if (step.right.messageClass) classes.push(step.right.messageClass);
    }
    return { ...listsOf(state.inbox), classes };
  };
  const stored = () => fromStream(store, 'bench-session').pipe(takeWhile((m) => m.kind === 'event'), parseRecorded(), eventsOnly());
  const viaQueueView = async (): Promise<FinalLists> => {
    const snap = await lastValueFrom(stored().pipe(queueView({ gaplessHandoff: false }), last()));
    return { nextTurn: snap.items.filter((i) => i.placement === 'queued').map((i) => i.id), nextStep: snap.items.filter((i) => i.placement !== 'queued').map((i) => i.id) };
  };
  const classify = (): Promise<MessageClass[]> =>
    new Promise((resolve, reject) => {
      const classes: MessageClass[] = [];
      stored().pipe(historyClassification()).subscribe({ next: (c) => void classes.push(c.class), error: reject, complete: () => resolve(classes) });
    });

  const times = { plain: [] as number[], queue: [] as number[], classes: [] as number[] };
  const cpus = { plain: [] as number[], queue: [] as number[], classes: [] as number[] };
  let reference: (FinalLists & { classes: MessageClass[] }) | null = null;
  for (let r = 0; r < ROUNDS; r++) {
    gc?.();
    times.plain.push(await seconds(() => (reference = plain())));
    cpus.plain.push(lastCpu);
    gc?.();
    let q: FinalLists | null = null;
    times.queue.push(await seconds(async () => (q = await viaQueueView())));
    cpus.queue.push(lastCpu);
    expectSameLists('queueView over the JSONL store vs the plain fold', q!, reference!);
    gc?.();
    let c: MessageClass[] = [];
    times.classes.push(await seconds(async () => (c = await classify())));
    cpus.classes.push(lastCpu);
    if (c.length !== reference!.classes.length || c.some((x, i) => x !== reference!.classes[i])) throw new Error('historyClassification differs from the plain fold');
  }
  expectSameLists('plain fold vs the plain-array model', reference!, expected1);
  const n = events.length;
  const rate = (xs: number[]) => n / median(xs);
  const cpuRate = (xs: number[]) => n / median(xs);
  const cpuNote = (k: keyof typeof cpus) => `CPU ${median(cpus[k]).toFixed(2)} s${k === 'plain' ? '' : `, ${(cpuRate(cpus[k]) / cpuRate(cpus.plain)).toFixed(2)}x by CPU time`} (${cpus[k].map((x) => x.toFixed(2)).join(', ')} s)`;
  console.log(`plain session fold (in memory)           ${fmt(rate(times.plain)).padStart(10)} ev/s   (${times.plain.map((x) => x.toFixed(2)).join(', ')} s)   ${cpuNote('plain')}`);
  console.log(`fromStream(JSONL) | queueView()          ${fmt(rate(times.queue)).padStart(10)} ev/s   ${(rate(times.queue) / rate(times.plain)).toFixed(2)}x the plain fold (target >= 0.5)   (${times.queue.map((x) => x.toFixed(2)).join(', ')} s)   ${cpuNote('queue')}`);
  console.log(`fromStream(JSONL) | historyClassification ${fmt(rate(times.classes)).padStart(9)} ev/s   ${(rate(times.classes) / rate(times.plain)).toFixed(2)}x the plain fold (target >= 0.5)   (${times.classes.map((x) => x.toFixed(2)).join(', ')} s)   ${cpuNote('classes')}`);

  // ---- 3. resume of the stored session vs the audit --------------------------------------------------------------
  events.length = 0;
  const resumeTimes: number[] = [];
  for (let r = 0; r < (PROJECTIONS_ONLY ? 0 : ROUNDS); r++) {
    gc?.();
    const runtime = createRuntime({ store, model: new ScriptedModel([]) });
    let lists: FinalLists | null = null;
    resumeTimes.push(
      await seconds(async () => {
        const agent = await runtime.resume('bench-session');
        lists = { nextTurn: agent.inbox.nextTurn.map((m) => m.id), nextStep: agent.inbox.nextStep.map((m) => m.id) };
      }),
    );
    expectSameLists('resume vs the plain-array model', lists!, expected1);
  }
  if (!PROJECTIONS_ONLY) console.log(`resume of the ${fmt(n)}-event session          ${median(resumeTimes).toFixed(2).padStart(7)} s   ${(median(resumeTimes) / med(runs.audit1)).toFixed(2)}x the audit's time (target <= 2)   (${resumeTimes.map((x) => x.toFixed(2)).join(', ')} s)`);
  await store.close();
} catch (e) {
  if (e !== AUDIT_DONE) throw e;
} finally {
  rmSync(root, { recursive: true, force: true });
}
