/**
 * The runtime thread's own share of the live export's hand-over (issue 32), without the runtime around it: the
 * telemetry calls of 10 sessions × `--turns` turns (memory store, scripted model, 1-step turns) are recorded once
 * (`follow`, `observe` with the data JSON the runtime passes, `forget`, `storeOperation`), then replayed `--rounds`
 * times into the export worker's port (`onWorker`, its worker deriving and counting the spans, sending nothing),
 * the worker flushed between rounds. Reported: the CPU time of the calling thread (`/proc/thread-self/schedstat`, ns)
 * per turn over a round's calls — what the runtime's thread spends handing the log over (writing the records and
 * posting them) — minimum and median of the rounds. The code is loaded from `--checkout` (default: this one), so
 * that two builds can be run interleaved, one process each.
 *
 *   npx tsx bench/support/telemetry-handover-replay.ts [--turns 300] [--rounds 12] [--checkout <dir>]
 */
import { fileURLToPath } from 'node:url';
import type { LogEvent } from '../../domain/events.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { argOf } from './bench-args.js';
import { machineLine, median } from './machine.js';
import { followupTurns } from './turn-loop.js';
import { threadCpuNs } from './cpu-time.js';

const TURNS = Number(argOf('turns', '300'));
const ROUNDS = Number(argOf('rounds', '12'));
const root = argOf('checkout', fileURLToPath(new URL('../..', import.meta.url))).replace(/\/$/, '');

const { ScriptedModel } = (await import(`${root}/adapters/model/scripted/scripted-model.ts`)) as typeof import('../../adapters/model/scripted/scripted-model.js');
const { MemoryEventStore } = (await import(`${root}/adapters/store/memory/memory-event-store.ts`)) as typeof import('../../adapters/store/memory/memory-event-store.js');
const { onWorker } = (await import(`${root}/adapters/telemetry/otel-telemetry.ts`)) as typeof import('../../adapters/telemetry/otel-telemetry.js');
const { createUserMessage } = (await import(`${root}/domain/message.ts`)) as typeof import('../../domain/message.js');
const { createRuntime } = (await import(`${root}/runtime/runtime.ts`)) as typeof import('../../runtime/runtime.js');
const { silentLogger } = (await import(`${root}/runtime/logger.ts`)) as typeof import('../../runtime/logger.js');

/** One recorded telemetry call. */
type Call =
  | { readonly kind: 'follow'; readonly sessionId: string; readonly history: readonly LogEvent[] }
  | { readonly kind: 'observe'; readonly sessionId: string; readonly event: LogEvent; readonly dataJson: string | undefined }
  | { readonly kind: 'forget'; readonly sessionId: string }
  | { readonly kind: 'operation'; readonly op: StoreOperation };
const calls: Call[] = [];
const recorder: SessionTelemetry = {
  follow: (sessionId, history) => void calls.push({ kind: 'follow', sessionId, history: history.slice() }),
  observe: (sessionId, event, dataJson) => void calls.push({ kind: 'observe', sessionId, event, dataJson }),
  forget: (sessionId) => void calls.push({ kind: 'forget', sessionId }),
  storeOperation: (op) => void calls.push({ kind: 'operation', op }),
};
const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: () => 'done' }), logger: silentLogger, writeBatchDelayMs: 1, telemetry: recorder });
const agents = Array.from({ length: 10 }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
await followupTurns(agents, TURNS, () => createUserMessage('go'));
await Promise.all(agents.map((a) => a.dispose()));
const turns = TURNS * 10;

const telemetry = await onWorker({ endpoint: 'http://127.0.0.1:9' }, 'count');
const perTurn: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const n0 = threadCpuNs();
  for (const c of calls) {
    if (c.kind === 'observe') telemetry.observe(c.sessionId, c.event, c.dataJson);
    else if (c.kind === 'operation') telemetry.storeOperation!(c.op);
    else if (c.kind === 'follow') telemetry.follow(c.sessionId, c.history);
    else telemetry.forget(c.sessionId);
  }
  perTurn.push((threadCpuNs() - n0) / 1000 / turns);
  await telemetry.forceFlush();
}
const stats = telemetry.stats();
console.log(`telemetry hand-over replay: ${root}; ${machineLine()}; ${(calls.length / turns).toFixed(1)} calls/turn, ${ROUNDS} rounds of ${turns} turns`);
console.log(`runtime thread ${Math.min(...perTurn).toFixed(2)} / ${median(perTurn).toFixed(2)} µs CPU/turn (min / median); ${stats.exported} spans derived, ${stats.dropped} dropped`);
await telemetry.shutdown();
process.exit(0);
