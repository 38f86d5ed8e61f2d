/**
 * The cost of live telemetry: turns/s of the runtime with telemetry off and on, side by side (issue 32, target
 * ≥ 0.9×). "On" is `createRuntime({ telemetry: createOtelTelemetry(…) })`: every event folded by the span derivation,
 * every completed span queued, turned into the SDK's span and exported in batches to an exporter without network:
 * `--exporter memory` (the default) the SDK's `InMemorySpanExporter`; `--exporter otlp-json` one that encodes each
 * batch as the OTLP/HTTP exporter does (the SDK's `JsonTraceSerializer`) and drops the bytes. What is measured is
 * steerlog's and the SDK's work, not a collector's. Memory store, scripted model; 1-step turns (a text reply) and
 * 3-step turns (two tool rounds, then text); `--sessions` concurrent sessions. One warm-up round each way, then
 * short rounds alternate off/on, so that load from elsewhere on the machine falls on both alike; reported: the
 * median of the on/off ratios of adjacent pairs (the figure to read on a shared machine), the medians of each side,
 * the CPU time per turn, and every round's figure.
 *
 * Last, the same cost measured apart from the load on the machine: one session's events for `--replay-turns` turns
 * recorded, then the CPU time the runtime took to produce them against the CPU time the live exporter takes to
 * follow them (derive, queue, convert, export), each the median of 5 passes, and the ratio they imply.
 *
 *   npx tsx bench/telemetry-overhead.ts [--seconds 0.5] [--rounds 12] [--sessions 10] [--exporter memory|otlp-json] [--replay-turns 1000]
 */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { createOtelTelemetry } from '../adapters/telemetry/otel-telemetry.js';
import { createUserMessage } from '../domain/message.js';
import type { ModelRequest } from '../runtime/ports/model.js';
import { createRuntime } from '../runtime/runtime.js';
import { silentLogger } from '../runtime/logger.js';
import type { LogEvent } from '../domain/events.js';
import type { SessionTelemetry } from '../runtime/ports/telemetry.js';
import { fmt, machineLine, median } from './support/machine.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 0.5);
const ROUNDS = arg('rounds', 12);
const SESSIONS = arg('sessions', 10);
type Shape = '1-step' | '3-step';
const EXPORTER = (() => {
  const i = process.argv.indexOf('--exporter');
  const v = i >= 0 ? process.argv[i + 1] : 'memory';
  if (v !== 'memory' && v !== 'otlp-json') throw new Error('--exporter takes memory or otlp-json');
  return v;
})();

// the OTLP/HTTP exporter's own encoder (a dependency of @opentelemetry/exporter-trace-otlp-http)
const { JsonTraceSerializer } =
  EXPORTER === 'otlp-json'
    ? ((await import('@opentelemetry/otlp-transformer' as string)) as { JsonTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array | undefined } })
    : { JsonTraceSerializer: null };

/** Encodes each batch as OTLP/HTTP JSON and drops it; counts spans and bytes. */
class EncodingExporter {
  spans = 0;
  bytes = 0;
  export(spans: unknown[], done: (r: { code: number }) => void): void {
    this.bytes += JsonTraceSerializer?.serializeRequest(spans)?.length ?? 0;
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown = async (): Promise<void> => {};
}

const run = async (shape: Shape, telemetryOn: boolean): Promise<{ turns: number; spans: number; cpuMsPerTurn: number; dropped: number }> => {
  const exporter = EXPORTER === 'memory' ? new InMemorySpanExporter() : new EncodingExporter();
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
  const cpu0 = process.cpuUsage();
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
  const cpu = process.cpuUsage(cpu0);
  const dropped = telemetry?.stats?.().dropped ?? 0;
  const spans = exporter instanceof EncodingExporter ? exporter.spans : exporter.getFinishedSpans().length;
  await telemetry?.shutdown();
  return { turns: turns / SECONDS, spans, cpuMsPerTurn: (cpu.user + cpu.system) / 1000 / Math.max(1, turns), dropped };
};

console.log(`telemetry overhead: ${SESSIONS} sessions, ${SECONDS} s per round, ${ROUNDS} rounds, exporter ${EXPORTER} (memory store, scripted model)`);
console.log(machineLine());
for (const shape of ['1-step', '3-step'] as const) {
  await run(shape, false);
  await run(shape, true);
  const off: number[] = [];
  const on: number[] = [];
  const cpuOff: number[] = [];
  const cpuOn: number[] = [];
  let spans = 0;
  let dropped = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const without = await run(shape, false);
    off.push(without.turns);
    cpuOff.push(without.cpuMsPerTurn);
    const withTelemetry = await run(shape, true);
    on.push(withTelemetry.turns);
    cpuOn.push(withTelemetry.cpuMsPerTurn);
    spans = withTelemetry.spans;
    dropped += withTelemetry.dropped;
  }
  const ratio = median(on) / median(off);
  const pairRatio = median(on.map((v, i) => v / off[i]!));
  const cpuRatio = median(cpuOff.map((v, i) => v / cpuOn[i]!));
  console.log(
    `${shape}: on/off ${pairRatio.toFixed(2)}× (median of ${ROUNDS} pairs) | off ${fmt(median(off))} turns/s | on ${fmt(median(on))} turns/s | medians on/off ${ratio.toFixed(2)}× | CPU ms/turn off ${median(cpuOff).toFixed(3)} on ${median(cpuOn).toFixed(3)} (off/on ${cpuRatio.toFixed(2)}×) | ${spans} spans exported in the last round, ${dropped} dropped in all | rounds off ${off.map(fmt).join(', ')} / on ${on.map(fmt).join(', ')}`,
  );
}

// ---- the cost apart from the machine's load: CPU time of producing a log vs following it -------------------------
const REPLAY_TURNS = arg('replay-turns', 1000);
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
for (const shape of ['1-step', '3-step'] as const) {
  const produce: number[] = [];
  const follow: number[] = [];
  let spans = 0;
  for (let pass = 0; pass < 6; pass++) {
    const events: LogEvent[] = [];
    const recorder: SessionTelemetry = { follow: (_s, h) => void events.push(...h), observe: (_s, e) => void events.push(e), forget: () => {} };
    const model = new ScriptedModel([], {
      whenExhausted: (request: ModelRequest) =>
        shape === '3-step' && request.step < 3 ? { toolCalls: [{ callId: `c${request.turn}-${request.step}`, name: 'noop' }] } : 'done',
    });
    const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], telemetry: recorder });
    const agent = runtime.createSession({ sessionId: `replay-${pass}` });
    let c0 = process.cpuUsage();
    for (let t = 0; t < REPLAY_TURNS; t++) {
      agent.followup(createUserMessage('go'));
      await agent.whenIdle();
    }
    await agent.checkpoint();
    const produced = cpuMs(process.cpuUsage(c0)) / REPLAY_TURNS;
    await agent.dispose();
    const exporter = EXPORTER === 'memory' ? new InMemorySpanExporter() : new EncodingExporter();
    const telemetry = await createOtelTelemetry({ exporter });
    c0 = process.cpuUsage();
    for (const e of events) telemetry.observe('replayed', e);
    telemetry.forget('replayed');
    await telemetry.forceFlush();
    const followed = cpuMs(process.cpuUsage(c0)) / REPLAY_TURNS;
    spans = exporter instanceof EncodingExporter ? exporter.spans : exporter.getFinishedSpans().length;
    await telemetry.shutdown();
    if (pass === 0) continue; // warm-up
    produce.push(produced);
    follow.push(followed);
  }
  const p = median(produce);
  const f = median(follow);
  console.log(
    `${shape} apart from load: runtime ${(p * 1000).toFixed(0)} µs CPU/turn, telemetry ${(f * 1000).toFixed(0)} µs CPU/turn (${spans / REPLAY_TURNS} spans/turn) → on/off ${(p / (p + f)).toFixed(2)}× | passes runtime ${produce.map((x) => (x * 1000).toFixed(0)).join(', ')} / telemetry ${follow.map((x) => (x * 1000).toFixed(0)).join(', ')} µs`,
  );
}
