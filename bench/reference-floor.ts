/**
 * Against the reference, side by side, on the same 200,000-event session log (10,000 pending at the peak).
 *
 * The reference harness's published package, npm `@deepseek-ai/dsh-agent@0.1.1-rc.2`, cannot be installed cleanly:
 * its peer `@deepseek-ai/dsh-session@0.1.1-rc.2` requires the peer `@deepseek-ai/dsh-brand@^0.1.1-rc.2`, and the
 * registry has no such version (latest 0.1.0-rc.8), so `npm install` stops with ERESOLVE; it installs only with
 * `--force` / `--legacy-peer-deps`, i.e. with a dependency tree its authors did not declare. So the floor here is
 * the naive reducer that copies the target list on every splice and checks ids by scanning (the shape of the
 * reference's Inbox replay), as bench/inbox-replay.ts uses too.
 *
 * Measured in one run, interleaved rounds, medians, identical final lists on every side:
 *   - the naive copy-per-splice replay of the log's splices (in process);
 *   - steerlog's reducer (`evolveInbox`) over the same splices (in process);
 *   - `steerlog audit <log> --json` end to end (spawned: process start, read, validate, fold, report).
 *
 *   npm run build && npx tsx bench/reference-floor.ts [--events 200000] [--rounds 3]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditReport } from '../domain/audit.js';
import type { InboxSplicedData } from '../domain/events.js';
import { evolveInbox } from '../domain/inbox/inbox-evolve.js';
import { initialInboxState } from '../domain/inbox/inbox-state.js';
import { naiveEvolve, type NaiveInbox } from './support/inbox-log.js';
import { fmt, machineLine, median } from './support/machine.js';
import { expectSameLists, listsOf, writeSessionLog, type FinalLists } from './support/session-log.js';
import { spawnMeasured } from './support/spawn-measure.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const EVENTS = arg('events', 200_000);
const ROUNDS = arg('rounds', 3);

const time = <T>(fn: () => T): { seconds: number; value: T } => {
  const t = performance.now();
  const value = fn();
  return { seconds: (performance.now() - t) / 1000, value };
};

const root = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'steerlog-reference-'));
try {
  console.log(`machine: ${machineLine()}`);
  console.log(`date: ${new Date().toISOString()}`);
  const file = join(root, 'log.jsonl');
  const expected = await writeSessionLog(file, EVENTS, 10_000);
  const splices: InboxSplicedData[] = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { type: string; data: unknown })
    .filter((e) => e.type === 'agent/inbox/spliced')
    .map((e) => e.data as InboxSplicedData);
  console.log(`log: ${fmt(expected.events!)} events, ${fmt(splices.length)} splices, 10,000 pending at the peak`);

  const naive = (): FinalLists => {
    let s: NaiveInbox = { nextTurn: [], nextStep: [] };
    for (const splice of splices) s = naiveEvolve(s, splice);
    return { nextTurn: s.nextTurn.map((m) => m.id), nextStep: s.nextStep.map((m) => m.id) };
  };
  const reducer = (): FinalLists => {
    let s = initialInboxState();
    for (const splice of splices) s = evolveInbox(s, splice);
    return listsOf(s);
  };
  const cli = join(import.meta.dirname, '..', 'bin', 'steerlog.js');
  reducer(); // warm-up
  const t = { naive: [] as number[], reducer: [] as number[], audit: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const n = time(naive);
    expectSameLists('naive vs the plain-array model', n.value, expected);
    t.naive.push(n.seconds);
    const s = time(reducer);
    expectSameLists('steerlog reducer vs the plain-array model', s.value, expected);
    t.reducer.push(s.seconds);
    const a = await spawnMeasured([cli, 'audit', file, '--json']);
    const report = JSON.parse(a.stdout) as AuditReport;
    if (!report.ok) throw new Error('audit failed');
    expectSameLists('steerlog audit vs the plain-array model', { nextTurn: report.inbox.nextTurn, nextStep: report.inbox.nextStep }, expected);
    t.audit.push(a.seconds);
  }
  const m = { naive: median(t.naive), reducer: median(t.reducer), audit: median(t.audit) };
  console.log(`naive copy-per-splice replay (the floor)   ${m.naive.toFixed(3).padStart(8)} s   (${t.naive.map((x) => x.toFixed(3)).join(', ')})`);
  console.log(`steerlog reducer (evolveInbox)             ${m.reducer.toFixed(3).padStart(8)} s   ${(m.naive / m.reducer).toFixed(0)}x the floor (target >= 500x)`);
  console.log(`steerlog audit --json, end to end          ${m.audit.toFixed(3).padStart(8)} s   ${(m.naive / m.audit).toFixed(1)}x the floor (target >= 100x)`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
