/**
 * The export worker's path on one thread, its allocation and its CPU time per turn (issue 32): one session's hand-over
 * for `--turns` turns is recorded (the records the runtime's thread pushes, cut every 100 turns), then, as the worker
 * does with each hand-over, each chunk is cloned (`v8.serialize`, `deserialize`), read back, folded by the span
 * derivation and its spans queued and sent through the OTLP/HTTP protobuf export to a receiver in a child process,
 * the queue flushed at the end. Three warm-up passes, then `--passes` passes timed (this thread's CPU from
 * `/proc/thread-self/schedstat`: minimum and median per turn), then one pass under V8's sampling heap profiler
 * (every 1 KiB, the collected objects counted too): the bytes allocated per turn, in all and by function. The code is
 * loaded from `--checkout` (default: this one), so that two builds can be run interleaved, one process each.
 * Memory store, scripted model, 1-step turns (`--shape 3-step`: two tool rounds, then text).
 *
 *   npx tsx bench/support/telemetry-worker-alloc.ts [--shape 1-step|3-step] [--turns 2000] [--passes 8] [--checkout <dir>]
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { argOf } from './bench-args.js';
import { machineLine, median } from './machine.js';
import { importRecordingRuntime, recordHandOver } from './handover-recording.js';
import { startOtlpSink } from './otlp-sink.js';
import { turnShapeOf } from './turn-loop.js';
import { threadCpuNs } from './cpu-time.js';

const shape = turnShapeOf(argOf('shape', '1-step'));
const TURNS = Number(argOf('turns', '2000'));
const PASSES = Number(argOf('passes', '8'));
const root = argOf('checkout', fileURLToPath(new URL('../..', import.meta.url))).replace(/\/$/, '');

const runtimeParts = await importRecordingRuntime(root);
const handOverModule = (await import(`${root}/adapters/telemetry/log-handover.ts`)) as typeof import('../../adapters/telemetry/log-handover.js');
const { pushFollow, pushForget, pushObserve, pushOperation, readHandOver } = handOverModule;
/** A hand-over being written: a `HandOverWriter` where the checkout has one, else (an older checkout) a flat array. */
type Writer = import('../../adapters/telemetry/log-handover.js').HandOverWriter;
const newWriter = (): Writer => ('HandOverWriter' in handOverModule ? new handOverModule.HandOverWriter() : ([] as unknown as Writer));
/** What a writer hands over (the array itself, from an older checkout). */
const taken = (w: Writer): unknown => (Array.isArray(w) ? w : w.take());
const { openSpanExportQueue } = (await import(`${root}/adapters/telemetry/open-export-queue.ts`)) as typeof import('../../adapters/telemetry/open-export-queue.js');
const { createSpanFollower } = (await import(`${root}/adapters/telemetry/span-follower.ts`)) as typeof import('../../adapters/telemetry/span-follower.js');


// the hand-over of one session, as the runtime's thread pushes it, cut every 100 turns
const chunks = await recordHandOver({ ...runtimeParts, pushFollow, pushObserve, pushForget, pushOperation, newWriter, take: taken }, shape, TURNS);

const receiver = await startOtlpSink();
const queue = await openSpanExportQueue({ endpoint: receiver.endpoint, protocol: 'http/protobuf', serviceName: 'steerlog', queue: {} });

/** One pass of the worker's path over the whole hand-over: clone, read, derive, queue, send; then flush. */
const pass = async (): Promise<void> => {
  const follower = createSpanFollower((s) => queue.add(s));
  for (const c of chunks) {
    readHandOver(deserialize(serialize(c)) as Parameters<typeof readHandOver>[0], follower);
    await new Promise((r) => setImmediate(r)); // the worker reads one hand-over per message
  }
  follower.forgetAll();
  await queue.flush();
};
for (let i = 0; i < 3; i++) await pass();
const cpu: number[] = [];
for (let i = 0; i < PASSES; i++) {
  const n0 = threadCpuNs();
  await pass();
  cpu.push((threadCpuNs() - n0) / 1000 / TURNS);
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
await pass();
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
session.disconnect();
const byFunction = new Map<string, number>();
let total = 0;
const walk = (n: ProfileNode): void => {
  const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + n.selfSize);
  total += n.selfSize;
  for (const c of n.children) walk(c);
};
walk(profile.head);
await queue.shutdown();
receiver.stop();

console.log(`telemetry worker path: ${root}, ${shape}, ${TURNS} turns; ${machineLine()}`);
console.log(`CPU ${Math.min(...cpu).toFixed(1)} / ${median(cpu).toFixed(1)} µs/turn (min / median of ${PASSES} passes); allocated ${(total / TURNS).toFixed(0)} bytes/turn`);
console.log(
  [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([k, v]) => `${(v / TURNS).toFixed(0)} ${k}`)
    .join(' | '),
);
