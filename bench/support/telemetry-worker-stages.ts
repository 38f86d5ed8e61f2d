/**
 * The export worker's CPU per turn by stage, loaded from either checkout (issue 32), for an A/B of the send path:
 * one session's hand-over for `--turns` turns is recorded (cut every 100 turns, as the worker receives it), then each
 * pass runs, cumulatively, over a fresh clone of it:
 * - `derive`: the records read back and folded by the span derivation, the spans dropped in batches of `--batch`;
 * - `encode`: derive, then the protobuf encoder (`OtlpProtobufEncoder`) over each batch;
 * - `queue`: derive, then the export queue with an exporter that encodes each batch and answers at once (no HTTP);
 * - `send`: the worker's whole path: derive, the export queue and the OTLP/HTTP protobuf exporter sending each batch
 *   to a receiver in a child process, the queue flushed at the end.
 * `--only <stage>` runs that stage alone (for a profile). Each stage's CPU is counted twice: this process's (`process.cpuUsage`, so V8's helper threads — the concurrent
 * garbage collector — are in it) and this thread's (`/proc/thread-self/schedstat`); and the receiver process's CPU
 * over the send passes (`/proc/<pid>/stat`, 10 ms ticks). Minimum and median of `--passes` passes after 2 warm-ups.
 *
 *   npx tsx bench/support/telemetry-worker-stages.ts [--shape 1-step|3-step] [--turns 4000] [--passes 10] [--batch 512] [--only derive|encode|queue|send] [--checkout <dir>]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { argOf } from './bench-args.js';
import { machineLine, median } from './machine.js';
import { importRecordingRuntime, recordHandOver } from './handover-recording.js';
import { turnShapeOf } from './turn-loop.js';
import { startOtlpSink } from './otlp-sink.js';
import { pidCpuMs, processCpuUs, threadCpuNs } from './cpu-time.js';

const shape = turnShapeOf(argOf('shape', '1-step'));
const TURNS = Number(argOf('turns', '4000'));
const PASSES = Number(argOf('passes', '10'));
const BATCH = Number(argOf('batch', '512'));
const root = argOf('checkout', fileURLToPath(new URL('../..', import.meta.url))).replace(/\/$/, '');

const runtimeParts = await importRecordingRuntime(root);
const { HandOverWriter, pushFollow, pushForget, pushObserve, pushOperation, readHandOver } = (await import(`${root}/adapters/telemetry/log-handover.ts`)) as typeof import('../../adapters/telemetry/log-handover.js');
const { openSpanExportQueue } = (await import(`${root}/adapters/telemetry/open-export-queue.ts`)) as typeof import('../../adapters/telemetry/open-export-queue.js');
const { OtlpProtobufEncoder } = (await import(`${root}/adapters/telemetry/otlp-protobuf.ts`)) as typeof import('../../adapters/telemetry/otlp-protobuf.js');
const { createSpanFollower } = (await import(`${root}/adapters/telemetry/span-follower.ts`)) as typeof import('../../adapters/telemetry/span-follower.js');
type HandOver = import('../../adapters/telemetry/log-handover.js').HandOver;
type Source = import('../../projections/telemetry/operation-spans.js').OperationSpanSource;

// the hand-over of one session, as the runtime's thread pushes it, cut every 100 turns
const chunks = (await recordHandOver({ ...runtimeParts, pushFollow, pushObserve, pushForget, pushOperation, newWriter: () => new HandOverWriter(), take: (w) => w.take() }, shape, TURNS)) as HandOver[];
const buffers = chunks.map((c) => serialize(c));

const receiver = await startOtlpSink();
const queue = await openSpanExportQueue({ endpoint: receiver.endpoint, protocol: 'http/protobuf', serviceName: 'steerlog', queue: { maxExportBatchSize: BATCH } });
const encoder = new OtlpProtobufEncoder('steerlog');
// the export queue with an exporter that encodes each batch and answers at once: the queue and encoding without HTTP
const queueEncoder = new OtlpProtobufEncoder('steerlog');
const encodingQueue = await openSpanExportQueue({
  exporter: { export: (spans, done) => void (queueEncoder.encode(spans as Source[]), done({ code: 0 })), shutdown: async () => {} },
  exporterTakesDerived: true,
  protocol: 'http/protobuf',
  serviceName: 'steerlog',
  queue: { maxExportBatchSize: BATCH },
});

const ALL = ['derive', 'encode', 'queue', 'send'] as const;
const only = argOf('only', '');
const STAGES = only === '' ? ALL : ALL.filter((s) => s === only);
const proc = new Map(STAGES.map((s) => [s, [] as number[]]));
const thread = new Map(STAGES.map((s) => [s, [] as number[]]));
let receiverMs = 0;
let bodyBytes = 0;
for (let pass = 0; pass < PASSES + 2; pass++) {
  for (const stage of STAGES) {
    const input = buffers.map((b) => deserialize(b) as HandOver);
    let batch: Source[] = [];
    const emit =
      stage === 'send'
        ? (s: Source): void => queue.add(s)
        : stage === 'queue'
          ? (s: Source): void => encodingQueue.add(s)
          : (s: Source): void => {
            batch.push(s);
            if (batch.length < BATCH) return;
            if (stage === 'encode') bodyBytes += encoder.encode(batch).length;
            batch = [];
          };
    const r0 = pidCpuMs(receiver.pid);
    const p0 = processCpuUs();
    const t0 = threadCpuNs();
    const follower = createSpanFollower(emit);
    for (const c of input) {
      readHandOver(c, follower);
      if (stage === 'send' || stage === 'queue') await new Promise((r) => setImmediate(r)); // the worker reads one hand-over per message
    }
    follower.forgetAll();
    if (stage === 'send') await queue.flush();
    else if (stage === 'queue') await encodingQueue.flush();
    else if (stage === 'encode' && batch.length > 0) encoder.encode(batch);
    const t1 = threadCpuNs();
    const p1 = processCpuUs();
    if (pass < 2) continue;
    proc.get(stage)!.push((p1 - p0) / TURNS);
    thread.get(stage)!.push((t1 - t0) / 1000 / TURNS);
    if (stage === 'send') receiverMs += pidCpuMs(receiver.pid) - r0;
  }
}
await queue.shutdown();
receiver.stop();
const f = (xs: number[]): string => `${Math.min(...xs).toFixed(1)} / ${median(xs).toFixed(1)}`;
console.log(`telemetry worker stages: ${root}, ${shape}, ${TURNS} turns, batches of ${BATCH}, ${(bodyBytes / PASSES / TURNS).toFixed(0)} body bytes/turn; ${machineLine()}`);
console.log(`process CPU µs/turn (min / median of ${PASSES}): ${STAGES.map((s) => `${s} ${f(proc.get(s)!)}`).join(', ')}`);
console.log(`thread CPU µs/turn (min / median of ${PASSES}): ${STAGES.map((s) => `${s} ${f(thread.get(s)!)}`).join(', ')}; receiver ${((receiverMs * 1000) / PASSES / TURNS).toFixed(1)} µs/turn`);
