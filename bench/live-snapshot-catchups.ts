/**
 * What the live checkpoints' catch-ups cost per event (runtime/live-snapshots.ts), in one process: a session's log
 * of N events (run live through the runtime on a JSONL store, durability `none`, live snapshots off), then the
 * catch-ups alone, told of the log 64 events at a time as the write-behind tells them, in two modes interleaved
 * over rounds: `read` (the catch-up reads the events back from the store and folds them: `foldRange`, what every
 * catch-up did before the events held in memory were used) and `held` (it folds the events the live log holds). Each
 * round starts from a store without snapshots. Reports the CPU time (user + system) per event of the log, medians.
 *
 *   npx tsx bench/live-snapshot-catchups.ts [--events 20480] [--rounds 5] [--every 512]
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

const EVENTS = Number(argOf('events', '20480'));
const ROUNDS = Number(argOf('rounds', '5'));
const EVERY = Number(argOf('every', '512'));
const STEP = 64;

const dir = mkdtempSync(join(tmpdir(), 'steerlog-catchups-'));
try {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const model = new ScriptedModel([], { whenExhausted: () => 'done' });
  const runtime = createRuntime({ store, model, logger: silentLogger, foldSnapshots: { live: false } });
  const agent = runtime.createSession({ sessionId: 's' });
  while (agent.events.length < EVENTS) {
    agent.followup(createUserMessage('go'));
    await agent.whenIdle();
    if (model.requests.length > 256) model.requests.length = 0;
  }
  await agent.checkpoint();
  const events: readonly LogEvent[] = [...agent.events];
  await agent.dispose();
  console.log(`# live-snapshot-catchups — ${events.length} events, every ${EVERY}, ${ROUNDS} rounds — machine: ${machineLine()}; ${new Date().toISOString()}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

  const round = async (mode: 'read' | 'held'): Promise<number> => {
    await store.saveFoldSnapshots('s', []);
    const live = new LiveSnapshots(store, silentLogger, EVERY, mode === 'held' ? (_stream, seq) => events[seq] : undefined);
    const cpu = process.cpuUsage();
    for (let end = STEP; end <= events.length; end += STEP) {
      live.committed('s', end);
      await live.settled();
    }
    const used = process.cpuUsage(cpu);
    const kept = await store.loadFoldSnapshots('s');
    if (kept.length !== Math.floor(events.length / EVERY)) throw new Error(`${mode}: ${kept.length} snapshots kept`);
    return (used.user + used.system) / events.length;
  };
  const per: Record<'read' | 'held', number[]> = { read: [], held: [] };
  await round('read');
  await round('held');
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 === 0 ? (['read', 'held'] as const) : (['held', 'read'] as const)) {
      const us = await round(mode);
      per[mode].push(us);
      console.log(`round ${r + 1} ${mode}: ${us.toFixed(2)} µs CPU per event of the log`);
    }
  }
  const read = median(per.read);
  const held = median(per.held);
  console.log(`median CPU per event: read ${read.toFixed(2)} µs, held ${held.toFixed(2)} µs (${(held / read).toFixed(2)}×); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
