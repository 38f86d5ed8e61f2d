/**
 * The cost of live telemetry: turns/s of the runtime with telemetry off and on, side by side (issue 32, target
 * ≥ 0.9×). "On" is `createRuntime({ telemetry: createOtelTelemetry(…) })`: every event folded by the span derivation,
 * every completed span (and a `db.*` span per store append) queued, turned into the SDK's span and exported in
 * batches to an exporter without network. `--exporter` names one or more (comma-separated):
 * - `none`: an exporter that counts the spans and drops them — steerlog's own cost (derive, queue, convert, hand over);
 * - `otlp-json`: encodes each batch as the OTLP/HTTP exporter does (the SDK's `JsonTraceSerializer`) and drops the
 *   bytes — what a deployment pays, but for the network;
 * - `memory`: the SDK's `InMemorySpanExporter`, which keeps every span for the life of the process (a test tool: the
 *   growing heap it leaves is a cost of keeping spans, not of exporting them).
 * Default: `none,otlp-json`. Memory store, scripted model; 1-step turns (a text reply) and 3-step turns (two tool
 * rounds, then text); `--sessions` concurrent sessions. One warm-up round each way, then short rounds in pairs whose
 * order alternates (off/on, on/off, …), so that load from elsewhere on the machine falls on both sides alike;
 * reported: the median of the on/off ratios of the pairs for turns/s and for CPU time per turn (process.cpuUsage),
 * the medians of each side, and every round's figure.
 *
 * Last, the same cost apart from the load on the machine: one session's events and store appends for
 * `--replay-turns` turns recorded, then the CPU time the runtime took to produce them against the CPU time the live
 * exporter takes to follow them (derive, queue, convert, export: the events and the appends' `db.*` spans), each the
 * median of 5 passes, and the ratio they imply.
 *
 * Then the SDK's encoders alone: the CPU time per span of the OTLP/HTTP exporter's JSON serializer and of the protobuf
 * one, over the spans of 100 3-step turns (`--parts` picks among live, replay and encode; all by default).
 *
 *   npx tsx bench/telemetry-overhead.ts [--seconds 0.5] [--rounds 12] [--sessions 10] [--exporter none,otlp-json,memory] [--replay-turns 1000] [--parts live,replay,encode]
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
import type { StoreOperation } from '../runtime/ports/store-operations.js';
import { fmt, machineLine, median } from './support/machine.js';
import { deriveSpans } from '../projections/telemetry/derive-spans.js';
import { createOperationSpans } from '../projections/telemetry/operation-spans.js';
import { SdkSpan } from '../adapters/telemetry/sdk-span.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 0.5);
const ROUNDS = arg('rounds', 12);
const SESSIONS = arg('sessions', 10);
type Shape = '1-step' | '3-step';
type ExporterKind = 'none' | 'otlp-json' | 'memory';
const EXPORTERS: readonly ExporterKind[] = (() => {
  const i = process.argv.indexOf('--exporter');
  const v = (i >= 0 ? process.argv[i + 1]! : 'none,otlp-json').split(',');
  for (const x of v) if (x !== 'none' && x !== 'otlp-json' && x !== 'memory') throw new Error('--exporter takes none, otlp-json or memory (comma-separated)');
  return v as ExporterKind[];
})();

// the OTLP/HTTP exporter's own encoder (a dependency of @opentelemetry/exporter-trace-otlp-http)
const { JsonTraceSerializer } = EXPORTERS.includes('otlp-json')
  ? ((await import('@opentelemetry/otlp-transformer' as string)) as { JsonTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array | undefined } })
  : { JsonTraceSerializer: null };

/** Drops each batch (`encode` false) or encodes it as OTLP/HTTP JSON first and drops the bytes; counts spans and bytes. */
class EncodingExporter {
  spans = 0;
  bytes = 0;
  constructor(readonly encode: boolean) {}
  export(spans: unknown[], done: (r: { code: number }) => void): void {
    if (this.encode) this.bytes += JsonTraceSerializer?.serializeRequest(spans)?.length ?? 0;
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown = async (): Promise<void> => {};
}

const exporterOf = (kind: ExporterKind): InMemorySpanExporter | EncodingExporter => (kind === 'memory' ? new InMemorySpanExporter() : new EncodingExporter(kind === 'otlp-json'));

const run = async (shape: Shape, telemetryOn: boolean, kind: ExporterKind): Promise<{ turns: number; spans: number; cpuMsPerTurn: number; dropped: number }> => {
  const exporter = exporterOf(kind);
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

console.log(`telemetry overhead: ${SESSIONS} sessions, ${SECONDS} s per round, ${ROUNDS} rounds, exporters ${EXPORTERS.join(', ')} (memory store, scripted model)`);
console.log(machineLine());
const PARTS = (() => {
  const i = process.argv.indexOf('--parts');
  return new Set((i >= 0 ? process.argv[i + 1]! : 'live,replay,encode').split(','));
})();
for (const kind of PARTS.has('live') ? EXPORTERS : []) {
  for (const shape of ['1-step', '3-step'] as const) {
    await run(shape, false, kind);
    await run(shape, true, kind);
    const off: number[] = [];
    const on: number[] = [];
    const cpuOff: number[] = [];
    const cpuOn: number[] = [];
    let spans = 0;
    let dropped = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // the pair's order alternates, so that a load that rises or falls hits "on" first as often as "off"
      const first = r % 2 === 0 ? false : true;
      const a = await run(shape, first, kind);
      const b = await run(shape, !first, kind);
      const [without, withTelemetry] = first ? [b, a] : [a, b];
      off.push(without.turns);
      cpuOff.push(without.cpuMsPerTurn);
      on.push(withTelemetry.turns);
      cpuOn.push(withTelemetry.cpuMsPerTurn);
      spans = withTelemetry.spans;
      dropped += withTelemetry.dropped;
    }
    const ratio = median(on) / median(off);
    const pairRatio = median(on.map((v, i) => v / off[i]!));
    const cpuRatio = median(cpuOff.map((v, i) => v / cpuOn[i]!));
    console.log(
      `${kind} ${shape}: on/off ${pairRatio.toFixed(2)}× turns/s (median of ${ROUNDS} pairs), ${cpuRatio.toFixed(2)}× by CPU time per turn (off/on, median of pairs) | off ${fmt(median(off))} turns/s | on ${fmt(median(on))} turns/s | medians on/off ${ratio.toFixed(2)}× | CPU ms/turn off ${median(cpuOff).toFixed(3)} on ${median(cpuOn).toFixed(3)} | ${spans} spans exported in the last round, ${dropped} dropped in all | rounds off ${off.map(fmt).join(', ')} / on ${on.map(fmt).join(', ')}`,
    );
  }
}

// ---- the cost apart from the machine's load: CPU time of producing a log vs following it -------------------------
const REPLAY_TURNS = arg('replay-turns', 1000);
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
for (const kind of PARTS.has('replay') ? EXPORTERS : []) for (const shape of ['1-step', '3-step'] as const) {
  const produce: number[] = [];
  const follow: number[] = [];
  let spans = 0;
  for (let pass = 0; pass < 6; pass++) {
    const events: LogEvent[] = [];
    const operations: StoreOperation[] = [];
    const recorder: SessionTelemetry = {
      follow: (_s, h) => void events.push(...h),
      observe: (_s, e) => void events.push(e),
      forget: () => {},
      storeOperation: (op) => void operations.push(op),
    };
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
    const exporter = exporterOf(kind);
    const telemetry = await createOtelTelemetry({ exporter });
    const appends = operations.map((op) => ({ ...op, collection: 'replayed' }));
    c0 = process.cpuUsage();
    // the appends' spans are made as the appends end, between the events: here after them (the same work)
    for (const e of events) telemetry.observe('replayed', e);
    for (const op of appends) telemetry.storeOperation?.(op);
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
    `${kind} ${shape} apart from load: runtime ${(p * 1000).toFixed(0)} µs CPU/turn, telemetry ${(f * 1000).toFixed(0)} µs CPU/turn (${spans / REPLAY_TURNS} spans/turn) → on/off ${(p / (p + f)).toFixed(2)}× | passes runtime ${produce.map((x) => (x * 1000).toFixed(0)).join(', ')} / telemetry ${follow.map((x) => (x * 1000).toFixed(0)).join(', ')} µs`,
  );
}

// ---- the SDK's encoders alone: CPU time per span of the OTLP/HTTP JSON and protobuf serializers --------------------
if (PARTS.has('encode')) {
  const transformer = (await import('@opentelemetry/otlp-transformer' as string)) as Record<'JsonTraceSerializer' | 'ProtobufTraceSerializer', { serializeRequest(spans: unknown[]): Uint8Array | undefined }>;
  const { resourceFromAttributes } = (await import('@opentelemetry/resources')) as { resourceFromAttributes: (a: Record<string, string>) => unknown };
  // 100 turns of the 3-step shape, their spans and their appends' db.* spans, as the exporter gets them
  const events: LogEvent[] = [];
  const operations: StoreOperation[] = [];
  const recorder: SessionTelemetry = { follow: (_s, h) => void events.push(...h), observe: (_s, e) => void events.push(e), forget: () => {}, storeOperation: (op) => void operations.push(op) };
  const model = new ScriptedModel([], { whenExhausted: (r: ModelRequest) => (r.step < 3 ? { toolCalls: [{ callId: `c${r.turn}-${r.step}`, name: 'noop' }] } : 'done') });
  const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], telemetry: recorder });
  const agent = runtime.createSession({ sessionId: 'encode' });
  for (let t = 0; t < 100; t++) {
    agent.followup(createUserMessage('go'));
    await agent.whenIdle();
  }
  await agent.dispose();
  const resource = resourceFromAttributes({ 'service.name': 'steerlog' });
  const operationSpan = createOperationSpans();
  const sdk = [...deriveSpans(events).spans, ...operations.map(operationSpan)].map((span) => new SdkSpan(span, resource));
  for (const name of ['JsonTraceSerializer', 'ProtobufTraceSerializer'] as const) {
    const perSpan: number[] = [];
    let bytes = 0;
    for (let pass = 0; pass < 21; pass++) {
      const c0 = process.cpuUsage();
      for (let k = 0; k < 5; k++) bytes = transformer[name].serializeRequest(sdk)?.length ?? 0;
      if (pass > 0) perSpan.push(cpuMs(process.cpuUsage(c0)) * 1000 / (5 * sdk.length));
    }
    console.log(`encode ${name}: ${median(perSpan).toFixed(1)} µs CPU/span (median of 20 passes over ${sdk.length} spans, min ${Math.min(...perSpan).toFixed(1)}), ${Math.round(bytes / sdk.length)} bytes/span`);
  }
}
