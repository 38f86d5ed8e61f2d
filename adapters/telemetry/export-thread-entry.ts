import { parentPort, workerData } from 'node:worker_threads';
import type { DerivedSpan } from '../../projections/telemetry/span-types.js';
import { importOptionalPackage } from '../optional-package.js';
import type { ExportThreadData, FromExportThread, ToExportThread } from './export-thread.js';
import { createOtlpSpanExporter } from './otlp-exporter.js';
import { SdkSpan } from './sdk-span.js';
import { SpanExportQueue } from './span-export-queue.js';
import { isTelemetryUnavailableError, TelemetryUnavailableError } from './telemetry-unavailable.js';

/**
 * The export worker (started by `startExportThread`): loads the SDK, then queues the spans it is handed and sends
 * them through the SDK's OTLP/HTTP exporter; answers each flush and shutdown with its counts, and posts the counts
 * after each export.
 */

const port = parentPort;
if (port === null) throw new Error('export-thread-entry runs on a worker thread');
const data = workerData as ExportThreadData;
const post = (m: FromExportThread): void => port.postMessage(m);
const missing = (name: string, cause: unknown): Error => new TelemetryUnavailableError(name, { cause });

const start = async (): Promise<void> => {
  await importOptionalPackage('@opentelemetry/sdk-trace-base', (cause) => missing('@opentelemetry/sdk-trace-base', cause));
  const { resourceFromAttributes } = (await importOptionalPackage('@opentelemetry/resources', (cause) => missing('@opentelemetry/resources', cause))) as {
    resourceFromAttributes: (a: Record<string, string>) => unknown;
  };
  const exporter = await createOtlpSpanExporter(data.endpoint, data.protocol, missing);
  const resource = resourceFromAttributes({ 'service.name': data.serviceName });
  const queue: SpanExportQueue<DerivedSpan> = new SpanExportQueue<DerivedSpan>(exporter, (s) => new SdkSpan(s, resource), {
    ...data.queue,
    onSettled: () => post({ kind: 'stats', stats: queue.stats() }),
  });
  port.on('message', (m: ToExportThread) => {
    switch (m.kind) {
      case 'spans':
        for (const s of JSON.parse(m.json) as DerivedSpan[]) queue.add(s);
        return;
      case 'flush':
        void queue.flush().then(() => post({ kind: 'stats', stats: queue.stats(), id: m.id }));
        return;
      case 'shutdown':
        void queue.shutdown().then(() => post({ kind: 'stats', stats: queue.stats(), id: m.id }));
        return;
    }
  });
  post({ kind: 'ready' });
};

start().catch((e: unknown) => post(isTelemetryUnavailableError(e) ? { kind: 'unavailable', packageName: e.packageName } : { kind: 'failed', message: e instanceof Error ? e.message : String(e) }));
