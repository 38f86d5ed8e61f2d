import { StoreAppendSpan, type OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import { importOptionalPackage } from '../optional-package.js';
import { createDerivedProtobufExporter, createOtlpSpanExporter, type OtlpProtocol } from './otlp-exporter.js';
import { SdkSpan } from './sdk-span.js';
import { SpanExportQueue, type SpanExporterLike, type SpanExportQueueOptions } from './span-export-queue.js';
import { TelemetryUnavailableError } from './telemetry-unavailable.js';

/** What {@link openSpanExportQueue} sends to and how. */
export interface SpanExportTarget {
  /** The SDK exporter to send through; when absent, the OTLP/HTTP exporter of `protocol` for `endpoint`. */
  readonly exporter?: SpanExporterLike;
  /** `exporter` takes the derived spans themselves, not SDK spans (the export worker's counting exporter). @defaultValue false */
  readonly exporterTakesDerived?: boolean;
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
 * The export queue in front of the exporter, the SDK's packages loaded first (optional peers: a missing one is a
 * {@link TelemetryUnavailableError}): what the live export runs, on the runtime's thread or on the export worker.
 * `http/protobuf` to an endpoint sends the derived spans through the official transport with steerlog's encoding of
 * them (`createDerivedProtobufExporter`: no SDK span is built, and a store append's span is written straight from
 * its operation); `http/json`, or an exporter given, gets SDK spans (a `StoreAppendSpan` built first).
 * @internal
 */
export const openSpanExportQueue = async (target: SpanExportTarget): Promise<SpanExportQueue<OperationSpanSource>> => {
  const missing = (name: string, cause: unknown): Error => new TelemetryUnavailableError(name, { cause });
  await importOptionalPackage('@opentelemetry/sdk-trace', (cause) => missing('@opentelemetry/sdk-trace', cause));
  const { resourceFromAttributes } = (await importOptionalPackage('@opentelemetry/resources', (cause) => missing('@opentelemetry/resources', cause))) as {
    resourceFromAttributes: (a: Record<string, string>) => unknown;
  };
  if (target.exporter === undefined && target.protocol === 'http/protobuf') {
    const derived = await createDerivedProtobufExporter(target.endpoint!, target.serviceName, missing);
    if (derived !== null) return new SpanExportQueue<OperationSpanSource>(derived, (s) => s, target.queue);
  }
  if (target.exporter !== undefined && target.exporterTakesDerived === true) return new SpanExportQueue<OperationSpanSource>(target.exporter, (s) => s, target.queue);
  const exporter = target.exporter ?? (await createOtlpSpanExporter(target.endpoint!, target.protocol, missing));
  const resource = resourceFromAttributes({ 'service.name': target.serviceName });
  return new SpanExportQueue<OperationSpanSource>(exporter, (s) => new SdkSpan(s instanceof StoreAppendSpan ? s.toSpan() : s, resource), target.queue);
};
