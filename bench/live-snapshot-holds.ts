/**
 * How long the live checkpoints' catch-ups hold the event loop when many sessions pass a checkpoint together (as the
 * 32 sessions of `bench:host` pass seq 511 within one run): 32 logs of 600 events (run live through the runtime on a
 * JSONL store, durability `none`, live snapshots off), then per round all 32 catch-ups told at once, in two modes
 * interleaved: `read` (each reads its events back from the store and folds them: `foldRange`, the path before the
 * held events were used) and `held` (each folds the events the live log holds, in slices). Reports the longest CPU
 * time of the process between two runs of a 1 ms interval timer (its own work's hold) per round.
 *
 *   npx tsx bench/live-snapshot-holds.ts [--rounds 7]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import type { LogEvent } from '../domain/events.js';
import { createUserMessage } from '../domain/message.js';
import { LiveSnapshots } from '../runtime/live-snapshots.js';
import { silentLogger } from '../runtime/logger.js';
import { createRuntime } from '../runtime/runtime.js';
import { argOf } from './support/bench-args.js';
import { machineLine, median } from './support/machine.js';

const SESSIONS = 32;
const EVENTS = 600;
const ROUNDS = Number(argOf('rounds', '7'));
const dir = mkdtempSync(join(tmpdir(), 'steerlog-snapshot-holds-'));
try {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const model = new ScriptedModel([], { whenExhausted: () => 'done' });
  const runtime = createRuntime({ store, model, logger: silentLogger, foldSnapshots: { live: false } });
  const logs: LogEvent[][] = [];
  for (let s = 0; s < SESSIONS; s++) {
    const agent = runtime.createSession({ sessionId: `s${s}` });
    while (agent.events.length < EVENTS) {
      agent.followup(createUserMessage('go'));
      await agent.whenIdle();
    }
    await agent.checkpoint();
    logs.push([...agent.events]);
    await agent.dispose();
  }
  const round = async (mode: 'read' | 'held'): Promise<number> => {
    for (let s = 0; s < SESSIONS; s++) await store.saveFoldSnapshots(`s${s}`, []);
    const live = new LiveSnapshots(store, silentLogger, 512, mode === 'held' ? (stream, seq) => logs[Number(stream.slice(1))]![seq] : undefined);
    let last = process.cpuUsage();
    let max = 0;
    const timer = setInterval(() => {
      const d = process.cpuUsage(last);
      max = Math.max(max, (d.user + d.system) / 1000);
      last = process.cpuUsage();
    }, 1);
    await new Promise((r) => setTimeout(r, 20));
    max = 0;
    last = process.cpuUsage();
    for (let s = 0; s < SESSIONS; s++) live.committed(`s${s}`, logs[s]!.length);
    await live.settled();
    await new Promise((r) => setTimeout(r, 5));
    clearInterval(timer);
    return max;
  };
  console.log(`# live-snapshot-holds — ${SESSIONS} sessions × ${EVENTS} events, ${ROUNDS} rounds — machine: ${machineLine()}; ${new Date().toISOString()}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const per: Record<'read' | 'held', number[]> = { read: [], held: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of ['read', 'held'] as const) {
      const ms = await round(mode);
      per[mode].push(ms);
      console.log(`round ${r + 1} ${mode}: longest CPU hold ${ms.toFixed(1)} ms`);
    }
  }
  console.log(`median longest hold: read ${median(per.read).toFixed(1)} ms, held ${median(per.held).toFixed(1)} ms; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
