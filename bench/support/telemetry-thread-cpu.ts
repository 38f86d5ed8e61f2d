/**
 * The live export's CPU time per turn on each thread of the process (issue 32): the runtime's thread, the export
 * worker and V8's helper threads (the garbage collector's, shared by every heap), from `/proc/self/task/<tid>/stat`
 * (10 ms ticks, summed over one round of 10 sessions × `--turns` turns after a warm-up round of 200 turns each), with
 * telemetry `off` or `proto` (the export worker, OTLP/HTTP protobuf to a receiver in a child process). The code is
 * loaded from `--checkout` (default: this one), so that two builds can be run interleaved, one process each.
 * Threads are named by id; the runtime's is `main`, the export worker is the one with the most CPU after it, created
 * after the helper threads (a higher id). Memory store, scripted model, 1-step turns (`--shape 3-step`: two tool
 * rounds, then text).
 *
 *   npx tsx bench/support/telemetry-thread-cpu.ts [--mode proto|off] [--shape 1-step|3-step] [--turns 1000] [--checkout <dir>]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { argOf } from './bench-args.js';
import { followupTurns, shapeAnswer, turnShapeOf } from './turn-loop.js';
import { startOtlpSink } from './otlp-sink.js';

const mode = argOf('mode', 'proto');
const shape = turnShapeOf(argOf('shape', '1-step'));
const TURNS = Number(argOf('turns', '1000'));
const root = argOf('checkout', fileURLToPath(new URL('../..', import.meta.url))).replace(/\/$/, '');
if (mode !== 'proto' && mode !== 'off') throw new Error('--mode takes proto or off');

const { ScriptedModel } = (await import(`${root}/adapters/model/scripted/scripted-model.ts`)) as typeof import('../../adapters/model/scripted/scripted-model.js');
const { MemoryEventStore } = (await import(`${root}/adapters/store/memory/memory-event-store.ts`)) as typeof import('../../adapters/store/memory/memory-event-store.js');
const { createOtelTelemetry } = (await import(`${root}/adapters/telemetry/otel-telemetry.ts`)) as typeof import('../../adapters/telemetry/otel-telemetry.js');
const { createUserMessage } = (await import(`${root}/domain/message.ts`)) as typeof import('../../domain/message.js');
const { createRuntime } = (await import(`${root}/runtime/runtime.ts`)) as typeof import('../../runtime/runtime.js');
const { silentLogger } = (await import(`${root}/runtime/logger.ts`)) as typeof import('../../runtime/logger.js');

/** CPU ms of each thread of this process so far, by thread id. */
const threads = (): Map<string, number> => {
  const cpu = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const f = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      cpu.set(tid, (Number(f[11]) + Number(f[12])) * 10); // utime, stime
    } catch {
      // the thread ended
    }
  }
  return cpu;
};

const receiver = await startOtlpSink();
const telemetry = mode === 'off' ? undefined : await createOtelTelemetry({ endpoint: receiver.endpoint });

/** 10 sessions × `turns` turns on a fresh runtime and store, disposed, every span exported. */
const round = async (turns: number): Promise<void> => {
  const model = new ScriptedModel([], { whenExhausted: shapeAnswer(shape) });
  const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], ...(telemetry ? { telemetry } : {}) });
  const agents = Array.from({ length: 10 }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
  await followupTurns(agents, turns, () => createUserMessage('go'));
  await Promise.all(agents.map((a) => a.dispose()));
  await telemetry?.forceFlush();
};

await round(200); // warm-up
const before = threads();
const t0 = performance.now();
await round(TURNS);
const seconds = (performance.now() - t0) / 1000;
const after = threads();
const turns = TURNS * 10;
const rows = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
const total = rows.reduce((a, [, ms]) => a + ms, 0);
const name = (tid: string): string => (tid === String(process.pid) ? 'main' : tid);
console.log(
  `${root} ${mode} ${shape}: ${(turns / seconds).toFixed(0)} turns/s, process ${((total * 1000) / turns).toFixed(1)} µs CPU/turn; by thread ` +
    rows.map(([tid, ms]) => `${name(tid)} ${((ms * 1000) / turns).toFixed(1)}`).join(', ') +
    ' µs CPU/turn',
);
await telemetry?.shutdown();
receiver.stop();
process.exit(0);
