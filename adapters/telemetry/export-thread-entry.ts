import { parentPort, workerData } from 'node:worker_threads';
import type { LogEvent } from '../../domain/events.js';
import type { DerivedSpan } from '../../projections/telemetry/span-types.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import { LogRecordKind, type ExportThreadData, type FromExportThread, type ToExportThread } from './export-thread.js';
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

const start = async (): Promise<void> => {
  const queue: SpanExportQueue<DerivedSpan> = await openSpanExportQueue({
    endpoint: data.endpoint,
    protocol: data.protocol,
    serviceName: data.serviceName,
    queue: { ...data.queue, onSettled: () => post({ kind: 'stats', stats: queue.stats() }) },
  });
  const follower = createSpanFollower((s) => queue.add(s));
  const apply = (records: readonly unknown[]): void => {
    let i = 0;
    while (i < records.length) {
      switch (records[i]) {
        case LogRecordKind.Observe:
          follower.observe(records[i + 1] as string, records[i + 2] as LogEvent);
          i += 3;
          break;
        case LogRecordKind.Follow:
          follower.follow(records[i + 1] as string, records[i + 2] as LogEvent[]);
          i += 3;
          break;
        case LogRecordKind.Forget:
          follower.forget(records[i + 1] as string);
          i += 2;
          break;
        case LogRecordKind.Operation:
          follower.storeOperation(records[i + 1] as StoreOperation);
          i += 2;
          break;
        default:
          throw new Error(`export thread: unknown log record ${String(records[i])}`);
      }
    }
  };
  port.on('message', (m: ToExportThread) => {
    switch (m.kind) {
      case 'log':
        apply(m.records);
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
  post({ kind: 'ready' });
};

start().catch((e: unknown) => post(isTelemetryUnavailableError(e) ? { kind: 'unavailable', packageName: e.packageName } : { kind: 'failed', message: e instanceof Error ? e.message : String(e) }));
