/**
 * The cost of live telemetry: turns/s of the runtime with telemetry off and on, side by side (issue 32, target
 * ≥ 0.9×), and the CPU time the runtime's thread spends per turn either way. "On" is
 * `createRuntime({ telemetry: createOtelTelemetry(…) })`: every event folded by the span derivation, every completed
 * span (and a `db.*` span per store append) queued, turned into the SDK's span and exported in batches. `--exporter`
 * names the configurations (comma-separated):
 * - `proto` (what `serve --otlp` and `createOtelTelemetry({ endpoint })` do by default): the export worker thread (at
 *   the default `exportPriority: 'low'`, under Linux's `SCHED_IDLE`; each line names the scheduling it got) —
 *   the runtime's thread hands the committed events over, the worker derives the spans and sends them through the
 *   SDK's OTLP/HTTP protobuf exporter (`@opentelemetry/exporter-trace-otlp-proto`) to a receiver this benchmark
 *   starts in a child process (it reads each request and answers 200, as a collector would);
 * - `proto-normal`: `proto` with `exportPriority: 'normal'` (the export worker thread at the process's priority);
 * - `proto-caller`: the same export on the runtime's thread (`thread: 'caller'`);
 * - `json`: the export worker with the SDK's OTLP/HTTP JSON exporter (`--otlp-protocol http/json`);
 * - `none`: the export worker with an exporter that counts the spans and drops them: the runtime's thread does exactly
 *   what it does for `proto` (hand the log over), the worker derives the spans and sends nothing — the runtime
 *   thread's own cost of the export isolated from the encoding and the request;
 * - `none-caller`: the counting exporter on the runtime's thread (derive, queue, convert there; no encoding);
 * - `memory`: the SDK's `InMemorySpanExporter` (a test tool that keeps every span), on the runtime's thread.
 * Default: `proto,proto-caller,none`. `--store memory` (the default: the memory store, where the runtime's own turn is
 * cheapest, so the telemetry's share is at its largest) or `--store jsonl` (the product's default store, a JSONL
 * directory opened as `serve --store jsonl:<dir>` opens it, new in a temporary directory for each round); scripted model; 1-step turns (a text reply) and 3-step turns (two
 * tool rounds, then text); `--sessions` concurrent sessions; one telemetry per configuration for all its rounds (as a
 * host keeps one). One warm-up round each way, then rounds in pairs whose order alternates (off/on, on/off, …), so
 * that load from elsewhere on the machine falls on both sides alike. Every round does the same work: its sessions run
 * `--turns` turns each (a fresh runtime and store), are disposed and (on) the telemetry is flushed; its turns/s are
 * its turns over that whole time, until the last span is exported. `--batches B` (default 1) runs B such batches one
 * after the other in each round, the flush once at its end: the same work per turn over a longer round, so that the
 * wait for the export's last batch is a smaller share of it (steady throughput). Reported: the median of the pairs'
 * on/off ratios of turns/s, with the order-statistic confidence interval of that median (at least 90 %:
 * `support/median-interval.ts`; the pairs taken as independent samples), and the median ratio of the turns/s while the
 * sessions ran (the disposal and the flush left out); the CPU time per turn
 * of the runtime's thread (`/proc/thread-self/schedstat`, summed over the rounds) and of the process
 * (`process.cpuUsage`, which counts the export worker too), off and on, and their ratios off/on (the CPU-time
 * figures are the ones a loaded machine does not blur: they count the work, not the waiting for a core); the load
 * average over the rounds; every round's figure.
 *
 * Then (`--parts replay`) the same cost apart from the load on the machine: one session's events and store appends
 * for `--replay-turns` turns recorded, then the CPU time the runtime took to produce them against the CPU time the
 * live exporter takes to follow them (derive, queue, convert, encode, send) — on the runtime's thread and in the
 * whole process — each the median of 5 passes, and the ratio they imply. Each event is handed over with the data's
 * JSON the runtime gave the telemetry port with it, as live.
 *
 * Then (`--parts encode`) the encoders alone: the CPU time per span of the OTLP/HTTP exporter's JSON serializer and of
 * the protobuf one (over SDK spans), and of steerlog's protobuf encoding of the derived spans (what the live
 * `http/protobuf` export sends), over the spans of 100 3-step turns. `--parts` picks among live, replay and encode (all by
 * default).
 *
 *   npx tsx bench/telemetry-overhead.ts [--turns 100] [--rounds 12] [--sessions 10] [--batches 1] [--shapes 1-step,3-step] [--store memory|jsonl] [--exporter proto,proto-caller,none] [--replay-turns 1000] [--parts live,replay,encode]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir, uptime } from 'node:os';
import { join } from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { ScriptedModel } from '../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../adapters/store/memory/memory-event-store.js';
import { openStore } from '../adapters/store/open-store.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { createOtelTelemetry, onWorker, type OtelTelemetry } from '../adapters/telemetry/otel-telemetry.js';
import { createUserMessage } from '../domain/message.js';
import { createRuntime } from '../runtime/runtime.js';
import { silentLogger } from '../runtime/logger.js';
import type { LogEvent } from '../domain/events.js';
import type { SessionTelemetry } from '../runtime/ports/telemetry.js';
import type { StoreOperation } from '../runtime/ports/store-operations.js';
import { fmt, machineLine, median } from './support/machine.js';
import { deriveSpans } from '../projections/telemetry/derive-spans.js';
import { createOperationSpans } from '../projections/telemetry/operation-spans.js';
import { SdkSpan } from '../adapters/telemetry/sdk-span.js';
import { OtlpProtobufEncoder } from '../adapters/telemetry/otlp-protobuf.js';
import { followupTurns, shapeAnswer, turnShapeOf, type TurnShape } from './support/turn-loop.js';
import { argOf } from './support/bench-args.js';
import { startOtlpSink } from './support/otlp-sink.js';
import { threadCpuNs } from './support/cpu-time.js';
import { medianInterval } from './support/median-interval.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const TURNS = arg('turns', 100);
const ROUNDS = arg('rounds', 12);
const SESSIONS = arg('sessions', 10);
/** Batches per round, one after the other (each a fresh runtime and store, `--sessions` × `--turns`); one flush per round. */
const BATCHES = arg('batches', 1);
if (!Number.isInteger(BATCHES) || BATCHES < 1) throw new Error('--batches takes a whole number ≥ 1');
/** The turn shapes measured live (`--shapes 1-step,3-step`, both by default). */
const SHAPES: readonly TurnShape[] = argOf('shapes', '1-step,3-step').split(',').map(turnShapeOf);
/** `memory` (the default: the runtime's own cost at its largest share) or `jsonl` (the product's default store). */
const STORE = (() => {
  const i = process.argv.indexOf('--store');
  const v = i >= 0 ? process.argv[i + 1]! : 'memory';
  if (v !== 'memory' && v !== 'jsonl') throw new Error('--store takes memory or jsonl');
  return v;
})();

/**
 * A fresh store for one round: the memory store, or a JSONL store in a new temporary directory, opened as `serve`
 * opens `--store jsonl:<dir>` (`openStore`), closed and removed after the round.
 */
const openRoundStore = async (): Promise<{ store: EventStore; close: () => Promise<void> }> => {
  if (STORE === 'memory') return { store: new MemoryEventStore(), close: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-telemetry-bench-'));
  const store = await openStore(`jsonl:${dir}`);
  return {
    store,
    close: async () => {
      await (store as { close?: () => Promise<void> }).close?.();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
type Shape = TurnShape;
const KINDS = ['none', 'none-caller', 'memory', 'proto', 'proto-normal', 'proto-caller', 'json'] as const;
type ExporterKind = (typeof KINDS)[number];
const EXPORTERS: readonly ExporterKind[] = (() => {
  const i = process.argv.indexOf('--exporter');
  const v = (i >= 0 ? process.argv[i + 1]! : 'proto,proto-caller,none').split(',');
  for (const x of v) if (!(KINDS as readonly string[]).includes(x)) throw new Error(`--exporter takes ${KINDS.join(', ')} (comma-separated)`);
  return v as ExporterKind[];
})();

/** Counts each batch's spans and drops them. */
class CountingExporter {
  spans = 0;
  export(spans: unknown[], done: (r: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown = async (): Promise<void> => {};
}

const receiver = EXPORTERS.some((k) => k !== 'none' && k !== 'none-caller' && k !== 'memory') ? await startOtlpSink() : null;

/** The telemetry of one configuration, and how many spans it has exported. */
const telemetryOf = async (kind: ExporterKind): Promise<{ telemetry: OtelTelemetry; spans: () => number }> => {
  switch (kind) {
    case 'none': {
      // the worker's counting exporter: no endpoint is ever contacted
      const telemetry = await onWorker({ endpoint: 'http://127.0.0.1:9' }, 'count');
      return { telemetry, spans: () => telemetry.stats().exported };
    }
    case 'none-caller': {
      const exporter = new CountingExporter();
      return { telemetry: await createOtelTelemetry({ exporter }), spans: () => exporter.spans };
    }
    case 'memory': {
      const exporter = new InMemorySpanExporter();
      return { telemetry: await createOtelTelemetry({ exporter }), spans: () => exporter.getFinishedSpans().length };
    }
    case 'proto':
    case 'proto-normal':
    case 'proto-caller':
    case 'json': {
      const telemetry = await createOtelTelemetry({
        endpoint: receiver!.endpoint,
        protocol: kind === 'json' ? 'http/json' : 'http/protobuf',
        thread: kind === 'proto-caller' ? 'caller' : 'worker',
        ...(kind === 'proto-normal' ? { exportPriority: 'normal' as const } : {}),
      });
      return { telemetry, spans: () => telemetry.stats().exported };
    }
  }
};

/** CPU time of the calling thread so far (ms, from its ns in `/proc/thread-self/schedstat`). */
const threadCpuMs = (): number => threadCpuNs() / 1e6;

/** What one round measured. */
interface Round {
  /** Turns per second, over the whole round: the turns, the disposal and (on) the flush of every span. */
  readonly turns: number;
  /** Turns per second while the sessions ran (the disposal and the flush left out). */
  readonly windowTurns: number;
  readonly turnCount: number;
  readonly spans: number;
  /** CPU ms of the runtime's thread and of the process over the round. */
  readonly threadMs: number;
  readonly processMs: number;
  /** The flush at the round's end (ms). */
  readonly flushMs: number;
  readonly dropped: number;
  readonly load: number;
}

/**
 * One round; "on" uses `made`, one telemetry for all the rounds of a configuration (as a host keeps one). The round
 * runs `--batches` batches one after the other, each a runtime and store of its own whose sessions run their turns and
 * are disposed; the telemetry is flushed once, at the round's end. Every batch's store, runtime and sessions are made
 * before the clock starts and the stores closed after it stops, as for a round of one batch.
 */
const run = async (shape: Shape, made: { telemetry: OtelTelemetry; spans: () => number } | undefined): Promise<Round> => {
  const telemetry = made?.telemetry;
  const stats0 = telemetry?.stats();
  const spans0 = made?.spans() ?? 0;
  const batches = [];
  for (let b = 0; b < BATCHES; b++) {
    const opened = await openRoundStore();
    const runtime = createRuntime({
      store: opened.store,
      model: new ScriptedModel([], { whenExhausted: shapeAnswer(shape) }),
      logger: silentLogger,
      writeBatchDelayMs: 1,
      tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }],
      ...(telemetry ? { telemetry } : {}),
    });
    batches.push({ opened, agents: Array.from({ length: SESSIONS }, (_, i) => runtime.createSession({ sessionId: `b${b}s${i}` })) });
  }
  let turns = 0;
  const load = loadavg()[0]!;
  const cpu0 = process.cpuUsage();
  const thread0 = threadCpuMs();
  const t0 = performance.now();
  let running = 0;
  for (const { agents } of batches) {
    const b0 = performance.now();
    await followupTurns(agents, TURNS, () => createUserMessage('go'), () => {
      turns++;
    });
    running += performance.now() - b0;
    await Promise.all(agents.map((a) => a.dispose()));
  }
  const f0 = performance.now();
  await telemetry?.forceFlush();
  const t1 = performance.now();
  const threadMs = threadCpuMs() - thread0;
  const cpu = process.cpuUsage(cpu0);
  const stats = telemetry?.stats();
  const dropped = stats && stats0 ? stats.dropped + stats.failed - stats0.dropped - stats0.failed : 0;
  const spans = (made?.spans() ?? 0) - spans0;
  for (const { opened } of batches) await opened.close();
  return { turns: (turns * 1000) / (t1 - t0), windowTurns: (turns * 1000) / running, turnCount: turns, spans, threadMs, processMs: (cpu.user + cpu.system) / 1000, flushMs: t1 - f0, dropped, load };
};

/** CPU ms per turn over a set of rounds (their sums). */
const perTurn = (rounds: readonly Round[], of: 'threadMs' | 'processMs'): number => rounds.reduce((a, r) => a + r[of], 0) / Math.max(1, rounds.reduce((a, r) => a + r.turnCount, 0));

console.log(`telemetry overhead: ${BATCHES > 1 ? `${BATCHES} batches of ` : ''}${SESSIONS} sessions × ${TURNS} turns per round, ${ROUNDS} rounds, exporters ${EXPORTERS.join(', ')} (${STORE === 'memory' ? 'memory store' : 'JSONL store in a temporary directory'}, scripted model)`);
console.log(machineLine());
/** The machine's load, as `uptime` prints it. */
const uptimeLine = (): string => `uptime ${(uptime() / 60).toFixed(0)} min, load average ${loadavg().map((x) => x.toFixed(2)).join(', ')}`;
console.log(`start: ${new Date().toISOString()} ${uptimeLine()}`);
const PARTS = (() => {
  const i = process.argv.indexOf('--parts');
  return new Set((i >= 0 ? process.argv[i + 1]! : 'live,replay,encode').split(','));
})();
for (const kind of PARTS.has('live') ? EXPORTERS : []) {
  const made = await telemetryOf(kind);
  for (const shape of SHAPES) {
    await run(shape, undefined);
    await run(shape, made);
    const off: Round[] = [];
    const on: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // the pair's order alternates, so that a load that rises or falls hits "on" first as often as "off"
      const first = r % 2 === 0 ? false : true;
      const a = await run(shape, first ? made : undefined);
      const b = await run(shape, first ? undefined : made);
      const [without, withTelemetry] = first ? [b, a] : [a, b];
      off.push(without);
      on.push(withTelemetry);
    }
    const pairRatios = on.map((v, i) => v.turns / off[i]!.turns);
    const pairRatio = median(pairRatios);
    const interval = medianInterval(pairRatios);
    const windowRatio = median(on.map((v, i) => v.windowTurns / off[i]!.windowTurns));
    const threadOff = perTurn(off, 'threadMs');
    const threadOn = perTurn(on, 'threadMs');
    const processOff = perTurn(off, 'processMs');
    const processOn = perTurn(on, 'processMs');
    const loads = [...off, ...on].map((x) => x.load);
    const spans = on[on.length - 1]!.spans;
    const dropped = on.reduce((a, x) => a + x.dropped, 0);
    const { thread, policy, note } = made.telemetry.exportScheduling;
    console.log(
      `${kind} ${shape} (export on the ${thread} thread, ${policy}${note === undefined ? '' : `: ${note}`}): on/off ${pairRatio.toFixed(2)}× turns/s (median of ${ROUNDS} pairs, ${(interval.coverage * 100).toFixed(0)}% interval ${interval.low.toFixed(2)}–${interval.high.toFixed(2)}; off ${fmt(median(off.map((x) => x.turns)))}, on ${fmt(median(on.map((x) => x.turns)))} turns/s; ${windowRatio.toFixed(2)}× while the sessions ran, disposal and flush left out) | ` +
        `runtime thread CPU/turn off ${threadOff.toFixed(3)} ms, on ${threadOn.toFixed(3)} ms (off/on ${(threadOff / threadOn).toFixed(2)}×) | ` +
        `process CPU/turn off ${processOff.toFixed(3)} ms, on ${processOn.toFixed(3)} ms (off/on ${(processOff / processOn).toFixed(2)}×) | ` +
        `load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} | flush at round end median ${median(on.map((x) => x.flushMs)).toFixed(0)} ms | ` +
        `${spans} spans exported in the last round, ${dropped} dropped or failed in all | rounds off ${off.map((x) => fmt(x.turns)).join(', ')} / on ${on.map((x) => fmt(x.turns)).join(', ')}`,
    );
  }
  await made.telemetry.shutdown();
}

// ---- the cost apart from the machine's load: CPU time of producing a log vs following it -------------------------
const REPLAY_TURNS = arg('replay-turns', 1000);
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;
for (const kind of PARTS.has('replay') ? EXPORTERS : []) for (const shape of ['1-step', '3-step'] as const) {
  const produce: number[] = [];
  const follow: number[] = [];
  let followThreadMs = 0;
  let spans = 0;
  // one telemetry for all the passes (as a host keeps one: its code warm, its worker started)
  const { telemetry, spans: exported } = await telemetryOf(kind);
  for (let pass = 0; pass < 6; pass++) {
    // each event with the data's JSON the runtime hands the telemetry (the string its store writes)
    const events: [LogEvent, string | undefined][] = [];
    const operations: StoreOperation[] = [];
    const recorder: SessionTelemetry = {
      follow: (_s, h) => void events.push(...h.map((e): [LogEvent, undefined] => [e, undefined])),
      observe: (_s, e, dataJson) => void events.push([e, dataJson]),
      forget: () => {},
      storeOperation: (op) => void operations.push(op),
    };
    const model = new ScriptedModel([], { whenExhausted: shapeAnswer(shape) });
    const opened = await openRoundStore();
    const runtime = createRuntime({ store: opened.store, model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], telemetry: recorder });
    const agent = runtime.createSession({ sessionId: `replay-${pass}` });
    let c0 = process.cpuUsage();
    await followupTurns([agent], REPLAY_TURNS, () => createUserMessage('go'));
    await agent.checkpoint();
    const produced = cpuMs(process.cpuUsage(c0)) / REPLAY_TURNS;
    await agent.dispose();
    await opened.close();
    const spans0 = exported();
    const appends = operations.map((op) => ({ ...op, collection: 'replayed' }));
    c0 = process.cpuUsage();
    const thread0 = threadCpuMs();
    // the appends' spans are made as the appends end, between the events: here after them (the same work)
    for (const [e, dataJson] of events) telemetry.observe('replayed', e, dataJson);
    for (const op of appends) telemetry.storeOperation?.(op);
    telemetry.forget('replayed');
    await telemetry.forceFlush();
    const followed = cpuMs(process.cpuUsage(c0)) / REPLAY_TURNS;
    const followedOnThread = threadCpuMs() - thread0;
    spans = exported() - spans0;
    if (pass === 0) continue; // warm-up
    produce.push(produced);
    follow.push(followed);
    followThreadMs += followedOnThread;
  }
  await telemetry.shutdown();
  const p = median(produce);
  const f = median(follow);
  const ft = followThreadMs / (5 * REPLAY_TURNS);
  console.log(
    `${kind} ${shape} apart from load: runtime ${(p * 1000).toFixed(0)} µs CPU/turn, telemetry ${(f * 1000).toFixed(0)} µs CPU/turn in the process, ${(ft * 1000).toFixed(0)} µs on the runtime's thread (over ${5 * REPLAY_TURNS} turns), (${spans / REPLAY_TURNS} spans/turn) → on/off ${(p / (p + f)).toFixed(2)}× by the process's CPU, ${(p / (p + ft)).toFixed(2)}× by the runtime thread's | passes runtime ${produce.map((x) => (x * 1000).toFixed(0)).join(', ')} / telemetry ${follow.map((x) => (x * 1000).toFixed(0)).join(', ')} µs`,
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
  const model = new ScriptedModel([], { whenExhausted: shapeAnswer('3-step') });
  const runtime = createRuntime({ store: new MemoryEventStore(), model, logger: silentLogger, writeBatchDelayMs: 1, tools: [{ name: 'noop', execute: () => ({ content: 'ok' }) }], telemetry: recorder });
  const agent = runtime.createSession({ sessionId: 'encode' });
  await followupTurns([agent], 100, () => createUserMessage('go'));
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
  // steerlog's protobuf encoding of the derived spans (what the live http/protobuf export sends: no SDK span built)
  const derived = sdk.map((x) => x.derived);
  const encoder = new OtlpProtobufEncoder('steerlog');
  const perSpan: number[] = [];
  let bytes = 0;
  for (let pass = 0; pass < 21; pass++) {
    const c0 = process.cpuUsage();
    for (let k = 0; k < 5; k++) bytes = encoder.encode(derived).length;
    if (pass > 0) perSpan.push((cpuMs(process.cpuUsage(c0)) * 1000) / (5 * derived.length));
  }
  console.log(`encode OtlpProtobufEncoder (derived spans, no SdkSpan): ${median(perSpan).toFixed(1)} µs CPU/span (median of 20 passes over ${derived.length} spans, min ${Math.min(...perSpan).toFixed(1)}), ${Math.round(bytes / derived.length)} bytes/span`);
}
receiver?.stop();
console.log(`end: ${new Date().toISOString()} ${uptimeLine()}`);
