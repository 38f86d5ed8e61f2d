import type { DerivedSpan } from '../../projections/telemetry/span-types.js';
import { importOptionalPackage } from '../optional-package.js';
import { createOtlpSpanExporter, type OtlpProtocol } from './otlp-exporter.js';
import { SdkSpan } from './sdk-span.js';
import { SpanExportQueue, type SpanExporterLike, type SpanExportQueueOptions } from './span-export-queue.js';
import { TelemetryUnavailableError } from './telemetry-unavailable.js';

/** What {@link openSpanExportQueue} sends to and how. */
export interface SpanExportTarget {
  /** The SDK exporter to send through; when absent, the OTLP/HTTP exporter of `protocol` for `endpoint`. */
  readonly exporter?: SpanExporterLike;
  /** The collector's URL (used when no `exporter` is given). */
  readonly endpoint?: string;
  /** The OTLP/HTTP encoding (used when no `exporter` is given). */
  readonly protocol: OtlpProtocol;
  /** The resource's `service.name`. */
  readonly serviceName: string;
  /** The queue's options. */
  readonly queue: SpanExportQueueOptions;
}

/**
 * The export queue in front of the SDK exporter, the SDK's packages loaded first (optional peers: a missing one is a
 * {@link TelemetryUnavailableError}): what the live export runs, on the runtime's thread or on the export worker.
 * @internal
 */
export const openSpanExportQueue = async (target: SpanExportTarget): Promise<SpanExportQueue<DerivedSpan>> => {
  const missing = (name: string, cause: unknown): Error => new TelemetryUnavailableError(name, { cause });
  await importOptionalPackage('@opentelemetry/sdk-trace', (cause) => missing('@opentelemetry/sdk-trace', cause));
  const { resourceFromAttributes } = (await importOptionalPackage('@opentelemetry/resources', (cause) => missing('@opentelemetry/resources', cause))) as {
    resourceFromAttributes: (a: Record<string, string>) => unknown;
  };
  const exporter = target.exporter ?? (await createOtlpSpanExporter(target.endpoint!, target.protocol, missing));
  const resource = resourceFromAttributes({ 'service.name': target.serviceName });
  return new SpanExportQueue<DerivedSpan>(exporter, (s) => new SdkSpan(s, resource), target.queue);
};
