/**
 * Where the export worker's CPU time goes (issue 32), on one thread, apart from the machine's load: one session's
 * hand-over for `--turns` turns is recorded (the records the runtime's thread posts, in chunks of 100 turns), then
 * each stage is run over it alone and cumulatively, and its CPU time per turn taken (this thread's, from
 * `/proc/thread-self/schedstat`; minimum and median of `--passes` passes):
 * - `serialize` / `deserialize`: the structured clone of the records (V8's serializer, what `postMessage` does on the
 *   runtime's thread and on the worker);
 * - `read`: the records read back, each event rebuilt (`readHandOver`; an event's data is parsed when first read, so
 *   this stage alone parses none);
 * - `derive`: read, then the span derivation (`createSpanFollower`);
 * - `sdk`: derive, then the SDK's span objects (`SdkSpan`) of each batch of 512;
 * - `encode`: sdk, then the SDK's protobuf serializer over each batch (`ProtobufTraceSerializer`);
 * - `send`: the worker's whole path: read, derive, the export queue and the SDK's OTLP/HTTP protobuf exporter sending
 *   each batch (`--batch`, default 512) to a receiver in a child process.
 *
 *   npx tsx bench/support/telemetry-worker-parts.ts [--shape 1-step|3-step] [--turns 2000] [--passes 15] [--batch 512]
 */
import { deserialize, serialize } from 'node:v8';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { HandOverWriter, pushFollow, pushForget, pushObserve, pushOperation, readHandOver, type HandOver } from '../../adapters/telemetry/log-handover.js';
import { openSpanExportQueue } from '../../adapters/telemetry/open-export-queue.js';
import { SdkSpan } from '../../adapters/telemetry/sdk-span.js';
import { createSpanFollower } from '../../adapters/telemetry/span-follower.js';
import { createUserMessage } from '../../domain/message.js';
import type { DerivedSpan } from '../../projections/telemetry/span-types.js';
import { StoreAppendSpan, type OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import { createRuntime } from '../../runtime/runtime.js';
import { silentLogger } from '../../runtime/logger.js';
import { argOf } from './bench-args.js';
import { machineLine, median } from './machine.js';
import { recordHandOver } from './handover-recording.js';
import { turnShapeOf } from './turn-loop.js';
import { startOtlpSink } from './otlp-sink.js';
import { threadCpuNs } from './cpu-time.js';

const shape = turnShapeOf(argOf('shape', '1-step'));
const TURNS = Number(argOf('turns', '2000'));
const PASSES = Number(argOf('passes', '15'));
const BATCH = Number(argOf('batch', '512'));

// the hand-over of one session, as the runtime's thread pushes it, cut every 100 turns
const chunks = (await recordHandOver({ ScriptedModel, MemoryEventStore, createUserMessage, createRuntime, silentLogger, pushFollow, pushObserve, pushForget, pushOperation, newWriter: () => new HandOverWriter(), take: (w) => w.take() }, shape, TURNS)) as HandOver[];

const transformer = (await import('@opentelemetry/otlp-transformer' as string)) as { ProtobufTraceSerializer: { serializeRequest(spans: unknown[]): Uint8Array | undefined } };
const { resourceFromAttributes } = (await import('@opentelemetry/resources')) as { resourceFromAttributes: (a: Record<string, string>) => unknown };
const resource = resourceFromAttributes({ 'service.name': 'steerlog' });
const receiver = await startOtlpSink();
const queue = await openSpanExportQueue({ endpoint: receiver.endpoint, protocol: 'http/protobuf', serviceName: 'steerlog', queue: { maxExportBatchSize: BATCH } });

const STAGES = ['serialize', 'deserialize', 'read', 'derive', 'sdk', 'encode', 'send'] as const;
const perTurn = new Map(STAGES.map((s) => [s, [] as number[]]));
const nothing = { observe: () => {}, follow: () => {}, forget: () => {}, storeOperation: () => {} };
let spans = 0;
let bytes = 0;
for (let pass = 0; pass < PASSES + 1; pass++) {
  const took = (stage: (typeof STAGES)[number], ns: number): void => void (pass > 0 && perTurn.get(stage)!.push(ns / 1000 / TURNS));
  let n0 = threadCpuNs();
  const buffers = chunks.map((c) => serialize(c));
  took('serialize', threadCpuNs() - n0);
  bytes = buffers.reduce((a, b) => a + b.length, 0);
  n0 = threadCpuNs();
  for (const b of buffers) deserialize(b);
  took('deserialize', threadCpuNs() - n0);
  for (const stage of ['read', 'derive', 'sdk', 'encode'] as const) {
    const input = buffers.map((b) => deserialize(b) as HandOver);
    let batch: DerivedSpan[] = [];
    let count = 0;
    const emit = (s: OperationSpanSource): void => {
      count++;
      // the SDK's spans are made of built spans (a store append's built first, as the SDK export path does)
      batch.push(s instanceof StoreAppendSpan ? (stage === 'derive' ? (s as never) : s.toSpan()) : s);
      if (batch.length < BATCH) return;
      if (stage === 'sdk') batch.map((x) => new SdkSpan(x, resource));
      else if (stage === 'encode') transformer.ProtobufTraceSerializer.serializeRequest(batch.map((x) => new SdkSpan(x, resource)));
      batch = [];
    };
    n0 = threadCpuNs();
    if (stage === 'read') for (const c of input) readHandOver(c, nothing);
    else {
      const follower = createSpanFollower(emit);
      for (const c of input) readHandOver(c, follower);
      follower.forgetAll();
    }
    took(stage, threadCpuNs() - n0);
    if (stage !== 'read') spans = count;
  }
  const input = buffers.map((b) => deserialize(b) as HandOver);
  n0 = threadCpuNs();
  const follower = createSpanFollower((s) => queue.add(s));
  for (const c of input) {
    readHandOver(c, follower);
    await new Promise((r) => setImmediate(r)); // the worker reads one hand-over per message
  }
  follower.forgetAll();
  await queue.flush();
  took('send', threadCpuNs() - n0);
}
await queue.shutdown();
receiver.stop();
console.log(`telemetry worker parts: ${shape}, ${TURNS} turns, ${spans / TURNS} spans/turn, ${(bytes / TURNS).toFixed(0)} bytes/turn handed over, batches of ${BATCH}; ${machineLine()}`);
console.log(STAGES.map((s) => `${s} ${Math.min(...perTurn.get(s)!).toFixed(1)} / ${median(perTurn.get(s)!).toFixed(1)}`).join(', ') + ' µs CPU/turn (min / median)');
