import { parentPort, workerData } from 'node:worker_threads';
import type { OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import type { ExportThreadData, FromExportThread, ToExportThread } from './export-thread.js';
import { lowerThisThread, type ExportScheduling } from './export-thread-scheduling.js';
import { readHandOver } from './log-handover.js';
import { openSpanExportQueue } from './open-export-queue.js';
import { createSpanFollower } from './span-follower.js';
import type { SpanExportQueue } from './span-export-queue.js';
import { isTelemetryUnavailableError } from './telemetry-unavailable.js';

/**
 * The export worker (started by `startExportThread`): loads the SDK and its OTLP/HTTP exporter, then follows the log
 * it is handed — derives the spans, queues them and sends them through the SDK's exporter; posts its counts after
 * each export and answers each flush and shutdown with them. At shutdown the spans still open are exported first.
 */

const port = parentPort;
if (port === null) throw new Error('export-thread-entry runs on a worker thread');
const data = workerData as ExportThreadData;
const post = (m: FromExportThread): void => port.postMessage(m);
/** Events and store operations read so far (the runtime's thread reads it to know how far behind this thread is). */
const read = new Int32Array(data.read);

/** The `count` exporter: every batch counts as exported, nothing is encoded or sent. */
const countingExporter = {
  export: (_spans: unknown[], done: (result: { code: number }) => void): void => done({ code: 0 }),
  shutdown: async (): Promise<void> => {},
};

const start = async (): Promise<void> => {
  const queue: SpanExportQueue<OperationSpanSource> = await openSpanExportQueue({
    ...(data.exporter === 'count' ? { exporter: countingExporter, exporterTakesDerived: true } : {}),
    endpoint: data.endpoint,
    protocol: data.protocol,
    serviceName: data.serviceName,
    queue: { ...data.queue, onSettled: () => post({ kind: 'stats', stats: queue.stats() }) },
  });
  const follower = createSpanFollower((s) => queue.add(s));
  /** Each followed session's id, a string of its own (`readHandOver`). */
  const sessionIds = new Map<string, string>();
  port.on('message', (m: ToExportThread) => {
    switch (m.kind) {
      case 'log':
        readHandOver(m.handOver, follower, sessionIds);
        Atomics.add(read, 0, m.count);
        return;
      case 'flush':
        void queue.flush().then(() => post({ kind: 'stats', stats: queue.stats(), id: m.id }));
        return;
      case 'shutdown':
        follower.forgetAll();
        void queue.shutdown().then(() => post({ kind: 'stats', stats: queue.stats(), id: m.id }));
        return;
    }
  });
  // lowered once the SDK is loaded: on cores busy with other work a SCHED_IDLE thread would take seconds to load it,
  // and the runtime's `createOtelTelemetry` waits for this thread to be ready
  const scheduling: ExportScheduling = data.priority === 'low' ? lowerThisThread(data.chrtPaths) : { thread: 'worker', policy: 'normal' };
  post({ kind: 'ready', scheduling });
};

start().catch((e: unknown) => post(isTelemetryUnavailableError(e) ? { kind: 'unavailable', packageName: e.packageName } : { kind: 'failed', message: e instanceof Error ? e.message : String(e) }));
