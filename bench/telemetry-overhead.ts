/**
 * The cost of live telemetry: turns/s of the runtime with telemetry off and on, side by side (issue 32, target
 * ≥ 0.9×). "On" is `createRuntime({ telemetry: createOtelTelemetry(…) })`: every event folded by the span derivation,
 * every completed span handed to the OpenTelemetry SDK's BatchSpanProcessor and an in-memory exporter (no network:
 * what is measured is steerlog's and the SDK's work, not a collector's). Memory store, scripted model; 1-step turns
 * (a text reply) and 3-step turns (two tool rounds, then text); `--sessions` concurrent sessions. Rounds alternate
 * off/on; medians reported, each round's figure after them.
 *
 *   npx tsx bench/telemetry-overhead.ts [--seconds 2] [--rounds 3] [--sessions 10]
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { createOtelTelemetry } from '../adapters/telemetry/otel-telemetry.js';
import { createUserMessage } from '../domain/message.js';
import type { ModelRequest } from '../runtime/ports/model.js';
import { createRuntime } from '../runtime/runtime.js';
import { silentLogger } from '../runtime/logger.js';
import { fmt, machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 2);
const ROUNDS = arg('rounds', 3);
const SESSIONS = arg('sessions', 10);
type Shape = '1-step' | '3-step';

const run = async (shape: Shape, telemetryOn: boolean): Promise<{ turns: number; spans: number }> => {
  const exporter = new InMemorySpanExporter();
  const telemetry = telemetryOn ? await createOtelTelemetry({ exporter }) : undefined;
  const model = new ScriptedModel([], {
    whenExhausted: (request: ModelRequest) =>
      shape === '3-step' && request.step < 3 ? { toolCalls: [{ callId: `c${request.turn}-${request.step}`, name: 'noop' }] } : 'done',
  });
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model,
    logger: silentLogger,
    writeBatchDelayMs: 1,
    tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }],
    ...(telemetry ? { telemetry } : {}),
  });
  const agents = Array.from({ length: SESSIONS }, (_, i) => runtime.createSession({ sessionId: `s${i}` }));
  let turns = 0;
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    agents.map(async (agent) => {
      while (performance.now() < deadline) {
        agent.followup(createUserMessage('go'));
        await agent.whenIdle();
        turns++;
      }
    }),
  );
  await Promise.all(agents.map((a) => a.dispose()));
  await telemetry?.forceFlush();
  const spans = exporter.getFinishedSpans().length;
  await telemetry?.shutdown();
  return { turns: turns / SECONDS, spans };
};

console.log(`telemetry overhead: ${SESSIONS} sessions, ${SECONDS} s per round, ${ROUNDS} rounds (memory store, scripted model)`);
console.log(machineLine());
for (const shape of ['1-step', '3-step'] as const) {
  const off: number[] = [];
  const on: number[] = [];
  let spans = 0;
  for (let r = 0; r < ROUNDS; r++) {
    off.push((await run(shape, false)).turns);
    const withTelemetry = await run(shape, true);
    on.push(withTelemetry.turns);
    spans = withTelemetry.spans;
  }
  const ratio = median(on) / median(off);
  console.log(
    `${shape}: off ${fmt(median(off))} turns/s | on ${fmt(median(on))} turns/s | on/off ${ratio.toFixed(2)}× (${spans} spans exported in the last round) | rounds off ${off.map(fmt).join(', ')} / on ${on.map(fmt).join(', ')}`,
  );
}
