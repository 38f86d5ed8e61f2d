/**
 * Where the runtime thread's share of the live export goes (issue 32): the runtime's CPU time per turn (its own
 * thread's, from `/proc/thread-self/schedstat` in ns, and the process's), with telemetry off and with parts of the
 * worker export alone, interleaved round by round (the order reversed every other round), medians of the rounds:
 * - `off`: no telemetry;
 * - `stub`: a telemetry port whose calls do nothing (what the runtime does only because telemetry is on);
 * - `push`: the hand-over's records pushed (`log-handover.ts`) and dropped every 10 ms, never posted;
 * - `post`: the same records posted every 10 ms to a worker that reads nothing (the push and the structured clone);
 * - `burn`: no telemetry, while another worker thread spins on arithmetic half of the time (CPU, no allocation);
 * - `none`: the export worker deriving the spans and counting them (the runtime's thread does what it does for
 *   `proto`; the worker derives, allocates and collects, but encodes and sends nothing).
 * Memory store, scripted model, 10 sessions × `--turns` turns a round, 1-step turns (`--shape 3-step`: two tool
 * rounds, then text).
 *
 *   npx tsx bench/support/telemetry-handover-parts.ts [--rounds 20] [--turns 300] [--shape 1-step] [--modes off,stub,push,post,burn,none]
 */
import { Worker } from 'node:worker_threads';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { onWorker, type OtelTelemetry } from '../../adapters/telemetry/otel-telemetry.js';
import { HandOverWriter, pushObserve, pushOperation, type HandOver } from '../../adapters/telemetry/log-handover.js';
import { createUserMessage } from '../../domain/message.js';
import { createRuntime } from '../../runtime/runtime.js';
import { silentLogger } from '../../runtime/logger.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { machineLine, median } from './machine.js';
import { argOf } from './bench-args.js';
import { followupTurns, shapeAnswer, turnShapeOf } from './turn-loop.js';
import { threadCpuNs } from './cpu-time.js';

const shape = turnShapeOf(argOf('shape', '1-step'));
const TURNS = Number(argOf('turns', '300'));
const ROUNDS = Number(argOf('rounds', '20'));
const MODES = argOf('modes', 'off,stub,push,post,burn,none').split(',');
/** CPU time of the calling thread so far (ns). */

/** A port that pushes the hand-over's records and, every 10 ms, hands them to `post` (or drops them). */
const pusher = (post: ((handOver: HandOver) => void) | null): SessionTelemetry => {
  const records = new HandOverWriter();
  let timer: NodeJS.Timeout | undefined;
  const queued = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      const h = records.take();
      post?.(h);
    }, 10);
    timer.unref();
  };
  return {
    follow: () => {},
    observe: (s, e, d) => {
      pushObserve(records, s, e, d);
      queued();
    },
    forget: () => {},
    storeOperation: (op) => {
      pushOperation(records, op);
      queued();
    },
  };
};
const reader = new Worker(`require('node:worker_threads').parentPort.on('message', () => {});`, { eval: true });
reader.unref();
/** Spins half of each 10 ms while told to (`true`), else sleeps. */
const burner = new Worker(
  `const { parentPort } = require('node:worker_threads'); let on = false; let x = 0; parentPort.on('message', (m) => { on = m; });
   const tick = () => { if (on) { const t = Date.now(); while (Date.now() - t < 5) x += Math.sqrt(x + 1); } setTimeout(tick, 5); }; tick();`,
  { eval: true },
);
burner.unref();
let burning = false;
const telemetryOf: Record<string, SessionTelemetry | undefined> = {
  off: undefined,
  stub: { follow: () => {}, observe: () => {}, forget: () => {}, storeOperation: () => {} },
  push: pusher(null),
  post: pusher((handOver) => reader.postMessage({ kind: 'log', handOver, count: 0 }, [handOver.numbers.buffer as ArrayBuffer])),
  burn: undefined,
};
const exporting: OtelTelemetry | undefined = MODES.includes('none') ? await onWorker({ endpoint: 'http://127.0.0.1:9' }, 'count') : undefined;
if (exporting) telemetryOf.none = exporting;
for (const m of MODES) if (!(m in telemetryOf)) throw new Error(`--modes takes off, stub, push, post, burn, none (comma-separated), not ${m}`);

/** One round of `mode`: CPU µs per turn of the runtime's thread and of the process. */
const run = async (mode: string): Promise<{ thread: number; process: number }> => {
  if ((mode === 'burn') !== burning) {
    burning = mode === 'burn';
    burner.postMessage(burning);
    await new Promise((r) => setTimeout(r, 20));
  }
  const telemetry = telemetryOf[mode];
  const model = new ScriptedModel([], { whenExhausted: shapeAnswer(shape) });
  const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], ...(telemetry ? { telemetry } : {}) });
  const agents = Array.from({ length: 10 }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
  const n0 = threadCpuNs();
  const c0 = process.cpuUsage();
  await followupTurns(agents, TURNS, () => createUserMessage('go'));
  await Promise.all(agents.map((a) => a.dispose()));
  if (telemetry === exporting) await exporting?.forceFlush();
  const c = process.cpuUsage(c0);
  return { thread: (threadCpuNs() - n0) / 1000 / (10 * TURNS), process: (c.user + c.system) / (10 * TURNS) };
};

console.log(`telemetry hand-over parts: ${shape}, 10 sessions × ${TURNS} turns a round, ${ROUNDS} rounds, memory store; ${machineLine()}; start ${new Date().toISOString()}`);
const measured = new Map(MODES.map((m) => [m, { thread: [] as number[], process: [] as number[] }]));
for (const m of MODES) for (let w = 0; w < 2; w++) await run(m); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const m of r % 2 === 0 ? MODES : [...MODES].reverse()) {
    const x = await run(m);
    measured.get(m)!.thread.push(x.thread);
    measured.get(m)!.process.push(x.process);
  }
}
for (const m of MODES) {
  const x = measured.get(m)!;
  console.log(`${shape} ${m}: runtime thread ${median(x.thread).toFixed(1)} µs CPU/turn (min ${Math.min(...x.thread).toFixed(1)}), process ${median(x.process).toFixed(1)} µs CPU/turn (min ${Math.min(...x.process).toFixed(1)})`);
}
await exporting?.shutdown();
console.log(`end ${new Date().toISOString()}`);
process.exit(0);
