/**
 * Live fold snapshots (`RuntimeOptions.foldSnapshots`): what taking them costs a session running live, and what they
 * save a host that restarts after it.
 *
 *   npx tsx bench/live-snapshots.ts ab   [--events 20000] [--rounds 3]   (CPU of a session run live to N events, on / off)
 *   npx tsx bench/live-snapshots.ts cold [--events 50000] [--rounds 3] [--modes off,on]   (a session run live, then cold reads in fresh processes)
 *   npx tsx bench/live-snapshots.ts run-one <dir> <events> on   (one session run live into the JSONL store <dir>, kept)
 *   npx tsx bench/live-snapshots.ts cold-ab --dirs <D1,D2> --build <other checkout> [--rounds 5]   (the cold page, this build against another)
 *
 * The session runs through the runtime on a JSONL store (durability `none`, so that the flush latency does not hide
 * the CPU), one text turn after another (a scripted model), until its log holds N events. `ab` runs it with live
 * snapshots on and off in interleaved rounds, each in a fresh process, and reports the process's CPU time (user +
 * system) per 1000 events after the first 2048 (warm-up: module loading, JIT), medians. `off` takes no snapshots while the session runs, as before live snapshots.
 *
 * `cold` runs the session once with live snapshots on and once off (two stores), then, in fresh processes, opens
 * each store and times (CPU and wall) a read of its last 200 events (`foldRange`, what a `session.history` page of
 * the end reads) and a resume from snapshots (`runtime.resume` with `resumeFromSnapshots`, what a cold
 * `session.prompt` does first). The page runs before any other read of the store: the snapshots it finds are the
 * ones the live session left.
 *
 * `cold-ab` times that cold last-200 page (`cold-one <dir> page`: the store's open, the catalog's list, the fold)
 * in fresh processes of this checkout and of `--build` (another checkout with its node_modules), interleaved round
 * by round on each store of `--dirs` (stores `run-one` left), and reports the medians of the process's CPU time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { createUserMessage } from '../domain/message.js';
import { silentLogger } from '../runtime/logger.js';
import { createRuntime } from '../runtime/runtime.js';
import { foldRange } from '../runtime/session-range.js';
import { argOf } from './support/bench-args.js';
import { machineLine, median } from './support/machine.js';

const SELF = fileURLToPath(import.meta.url);
const EVENTS = Number(argOf('events', process.argv[2] === 'cold' ? '50000' : '20000'));
const ROUNDS = Number(argOf('rounds', '3'));
/** Events run before the clock starts. */
const WARM_UP = 2048;
/** `--modes off,on`: which of the two `cold` runs (live snapshots off, on). */
const MODES = argOf('modes', 'off,on').split(',') as ('off' | 'on')[];

/** In this process: one session run live to `events` events on the store in `dir`; prints its CPU µs and events. */
const runOne = async (dir: string, events: number, live: boolean): Promise<void> => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const model = new ScriptedModel([], { whenExhausted: () => 'done' });
  const runtime = createRuntime({ store, model, logger: silentLogger, foldSnapshots: { live } });
  const agent = runtime.createSession({ sessionId: 'long' });
  // warm-up: the first WARM_UP events (module loading, JIT, the first catch-ups) are not timed
  let cpu = process.cpuUsage();
  let start = performance.now();
  let from = 0;
  while (agent.events.length < events) {
    if (from === 0 && agent.events.length >= WARM_UP) {
      from = agent.events.length;
      cpu = process.cpuUsage();
      start = performance.now();
    }
    agent.followup(createUserMessage('go'));
    await agent.whenIdle();
    if (model.requests.length > 256) model.requests.length = 0;
  }
  await agent.checkpoint();
  await runtime.foldSnapshotsSettled();
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  const n = agent.events.length - from;
  await agent.dispose();
  await store.close();
  console.log(JSON.stringify({ cpuUs: used.user + used.system, wallMs: wall, events: n }));
};

/** In this process: the cold reads of the store in `dir` (a last-200 page, then a resume from snapshots). */
const coldOne = async (dir: string, what: 'page' | 'resume'): Promise<void> => {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const openCpu = process.cpuUsage(cpu);
  const openWall = performance.now() - start;
  let foldedFrom = -1;
  let base = -1;
  if (what === 'page') {
    const last = (await store.listSessions({})).sessions.find((s) => s.sessionId === 'long')!.lastSeq;
    const page = await foldRange(store, 'long', { from: last + 1 - 200, to: last + 1 });
    foldedFrom = page.foldedFrom;
  } else {
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: () => 'done' }), logger: silentLogger, resumeFromSnapshots: true, foldSnapshots: { live: false } });
    const agent = await runtime.resume('long');
    base = agent.base;
    await agent.dispose();
  }
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - start;
  await store.close();
  console.log(JSON.stringify({ cpuUs: used.user + used.system, wallMs: wall, openCpuUs: openCpu.user + openCpu.system, openWallMs: openWall, foldedFrom, base }));
};

const child = (args: string[]): Record<string, number> => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SELF, ...args], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
};

const snapshotBytes = (dir: string): string => {
  const d = join(dir, 'snapshots');
  if (!existsSync(d)) return 'none';
  const files = readdirSync(d);
  return `${files.length} file, ${(files.reduce((n, f) => n + statSync(join(d, f)).size, 0) / 1024).toFixed(0)} KiB`;
};

const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');

/** `cold-one <dir> page` in a fresh process of the checkout `root`. */
const coldPageIn = (root: string, dir: string): Record<string, number> => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench/live-snapshots.ts'), 'cold-one', dir, 'page'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`cold-one in ${root} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
};

const command = process.argv[2];
if (command === 'run-one') await runOne(process.argv[3]!, Number(process.argv[4]), process.argv[5] === 'on');
else if (command === 'cold-one') await coldOne(process.argv[3]!, process.argv[4] as 'page' | 'resume');
else if (command === 'ab') {
  console.log(`# live-snapshots ab — ${EVENTS} events, ${ROUNDS} rounds — machine: ${machineLine()}; ${new Date().toISOString()}; load ${load()}`);
  const cpu: Record<'on' | 'off', number[]> = { on: [], off: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const dir = mkdtempSync(join(tmpdir(), 'steerlog-live-snap-'));
      try {
        const r = child(['run-one', dir, String(EVENTS), mode]);
        cpu[mode].push((r.cpuUs! / r.events!) * 1000);
        console.log(`round ${round + 1} ${mode}: ${r.events} events timed, CPU ${(r.cpuUs! / 1e6).toFixed(2)} s (${((r.cpuUs! / r.events!) * 1000 / 1000).toFixed(0)} ms per 1000 events), wall ${(r.wallMs! / 1000).toFixed(1)} s, snapshots ${snapshotBytes(dir)}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const on = median(cpu.on) / 1000;
  const off = median(cpu.off) / 1000;
  console.log(`median CPU per 1000 events: off ${off.toFixed(1)} ms, on ${on.toFixed(1)} ms (${(((on - off) / off) * 100).toFixed(1)} %); load ${load()}`);
} else if (command === 'cold') {
  console.log(`# live-snapshots cold — ${EVENTS} events — machine: ${machineLine()}; ${new Date().toISOString()}; load ${load()}`);
  const dirs = { off: mkdtempSync(join(tmpdir(), 'steerlog-live-cold-off-')), on: mkdtempSync(join(tmpdir(), 'steerlog-live-cold-on-')) };
  try {
    for (const mode of MODES) {
      const r = child(['run-one', dirs[mode], String(EVENTS), mode]);
      console.log(`run live, snapshots ${mode}: ${r.events} events timed, CPU ${(r.cpuUs! / 1e6).toFixed(2)} s, snapshots ${snapshotBytes(dirs[mode])}`);
    }
    for (const what of ['page', 'resume'] as const) {
      for (const mode of MODES) {
        const cpus: number[] = [];
        const walls: number[] = [];
        const opCpus: number[] = [];
        const opWalls: number[] = [];
        let detail = '';
        for (let round = 0; round < ROUNDS; round++) {
          // every round cold: the snapshots a read without them writes are removed (off: the state the host left)
          if (mode === 'off') rmSync(join(dirs.off, 'snapshots'), { recursive: true, force: true });
          const r = child(['cold-one', dirs[mode], what]);
          cpus.push(r.cpuUs! / 1000);
          walls.push(r.wallMs!);
          opCpus.push((r.cpuUs! - r.openCpuUs!) / 1000);
          opWalls.push(r.wallMs! - r.openWallMs!);
          detail = what === 'page' ? `folded from seq ${r.foldedFrom}` : `window from seq ${r.base}`;
        }
        console.log(`cold ${what === 'page' ? 'last-200 page' : 'resume (cold prompt)'}, live snapshots ${mode}: CPU ${median(cpus).toFixed(0)} ms, wall ${median(walls).toFixed(0)} ms with the store's open; after it: CPU ${median(opCpus).toFixed(0)} ms, wall ${median(opWalls).toFixed(0)} ms (medians of ${ROUNDS}; ${detail})`);
      }
    }
    console.log(`load ${load()}`);
  } finally {
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  }
} else if (command === 'cold-ab') {
  const dirs = argOf('dirs', '').split(',').filter(Boolean);
  const other = argOf('build', '');
  if (dirs.length === 0 || other === '') throw new Error('cold-ab needs --dirs <D1,D2> and --build <other checkout>');
  const builds = { this: join(SELF, '../..'), other };
  console.log(`# live-snapshots cold-ab — ${dirs.join(', ')} — this ${builds.this} / other ${other} — machine: ${machineLine()}; ${new Date().toISOString()}; load ${load()}`);
  const got = new Map<string, { cpu: number[]; after: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const dir of dirs) {
      for (const build of round % 2 === 0 ? (['other', 'this'] as const) : (['this', 'other'] as const)) {
        const r = coldPageIn(builds[build], dir);
        const key = `${dir} ${build}`;
        const g = got.get(key) ?? { cpu: [], after: [] };
        g.cpu.push(r.cpuUs! / 1000);
        g.after.push((r.cpuUs! - r.openCpuUs!) / 1000);
        got.set(key, g);
      }
    }
  }
  for (const [key, g] of got) console.log(`${key}: CPU median ${median(g.cpu).toFixed(1)} ms with the open, ${median(g.after).toFixed(1)} ms after it (rounds: ${g.cpu.map((c) => c.toFixed(0)).join(', ')})`);
  console.log(`load ${load()}`);
} else {
  console.error('usage: npx tsx bench/live-snapshots.ts ab|cold|run-one|cold-ab [--events N] [--rounds R]');
  process.exit(2);
}
