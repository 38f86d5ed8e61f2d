/**
 * Live latency from an append to the updated queue snapshot: a live agent (memory store, scripted model) with
 * `fromAgentLog(agent).pipe(eventsOnly(), queueView())` subscribed; each sample times one `inject` (a durable splice
 * appended to the live log) until the snapshot that contains it is emitted. Pending items are cleared every 100
 * samples, so the queue holds 0–100 items. Prints p50, p99, p99.9 and max.
 *   npx tsx bench/live-queue-latency.ts [samples=20000]
 */
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../domain/message.js';
import type { MessageId } from '../domain/brand.js';
import { eventsOnly, fromAgentLog, queueView } from '../projections/index.js';
import { silentLogger } from '../runtime/logger.js';
import { createRuntime } from '../runtime/runtime.js';
import { machineLine } from './support/machine.js';

const SAMPLES = Number(process.argv[2] ?? 20_000);
const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, writeBatchDelayMs: 50 });
const agent = runtime.createSession();
let lastSnapshotIds: readonly string[] = [];
let seen = 0;
const sub = fromAgentLog(agent)
  .pipe(eventsOnly(), queueView())
  .subscribe((s) => {
    lastSnapshotIds = s.items.map((i) => i.id);
    seen = performance.now();
  });

const latencies: number[] = [];
for (let i = 0; i < SAMPLES + 2000; i++) {
  const id = `m-${i}`;
  const message = createUserMessage(`context ${i}`, { kind: 'plugin', plugin: 'bench' }, { newId: () => id as MessageId });
  const t0 = performance.now();
  agent.inject(message);
  if (lastSnapshotIds.at(-1) !== id) throw new Error(`snapshot after ${id} missing`);
  if (i >= 2000) latencies.push(seen - t0); // the first 2,000 warm the JIT up
  if (i % 100 === 99) agent.inbox.clear();
  if (i % 1000 === 999) await agent.checkpoint();
}
sub.unsubscribe();
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
console.log(`machine: ${machineLine()}`);
console.log(`append → queue snapshot, ${latencies.length} samples, 0–100 pending: p50 ${us(q(0.5))}, p99 ${us(q(0.99))}, p99.9 ${us(q(0.999))}, max ${us(latencies.at(-1)!)} (aim: p99 < 1 ms)`);
await agent.dispose();
