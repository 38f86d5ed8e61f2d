import { createRequire } from 'node:module';
import type { OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import { importOptionalPackage } from '../optional-package.js';
import { otlpTracesUrl } from './otlp-http.js';
import { OtlpProtobufEncoder } from './otlp-protobuf.js';
import type { SpanExporterLike } from './span-export-queue.js';

/**
 * The official OpenTelemetry OTLP/HTTP span exporters, loaded on demand: `http/protobuf`
 * (`@opentelemetry/exporter-trace-otlp-proto`) or `http/json` (`@opentelemetry/exporter-trace-otlp-http`), the two
 * encodings an OTLP/HTTP receiver accepts at `<endpoint>/v1/traces`.
 */

/** The OTLP/HTTP encoding of the live export: binary protobuf or JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** The protocols {@link createOtlpSpanExporter} knows, for option parsing. */
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/** Is `v` an {@link OtlpProtocol}? */
export const isOtlpProtocol = (v: unknown): v is OtlpProtocol => v === 'http/protobuf' || v === 'http/json';

/** The exporter package of each protocol (an optional peer dependency). */
export const OTLP_EXPORTER_PACKAGE: Readonly<Record<OtlpProtocol, string>> = {
  'http/protobuf': '@opentelemetry/exporter-trace-otlp-proto',
  'http/json': '@opentelemetry/exporter-trace-otlp-http',
};

/**
 * Loads the SDK's OTLP/HTTP trace exporter for `protocol` and creates it for `endpoint`'s traces URL. `missing`
 * makes the caller's typed error when the package is not installed.
 */
export const createOtlpSpanExporter = async (endpoint: string, protocol: OtlpProtocol, missing: (packageName: string, cause: unknown) => Error): Promise<SpanExporterLike> => {
  const name = OTLP_EXPORTER_PACKAGE[protocol];
  const { OTLPTraceExporter } = (await importOptionalPackage(name, (cause) => missing(name, cause))) as { OTLPTraceExporter: new (config: { url: string }) => SpanExporterLike };
  return new OTLPTraceExporter({ url: otlpTracesUrl(endpoint) });
};

/** The parts of the OTLP exporter packages that {@link createDerivedProtobufExporter} assembles (their public exports). */
interface ExporterParts {
  readonly OTLPExporterBase: new (delegate: unknown) => SpanExporterLike;
  readonly createOtlpHttpExportDelegate: (options: unknown, serializer: unknown, componentType: string, metricsHelper: unknown, meterProvider: undefined) => unknown;
  readonly convertLegacyHttpOptions: (config: { url: string }, signal: string, path: string, headers: Record<string, string>) => unknown;
  readonly TraceExporterMetricsHelper: unknown;
  readonly deserializeResponse: (data: Uint8Array) => unknown;
}

/**
 * The transport of `@opentelemetry/exporter-trace-otlp-proto`, from the packages it is made of (resolved from the
 * exporter package, so the same copies it uses): `@opentelemetry/otlp-exporter-base` (`OTLPExporterBase`,
 * `createOtlpHttpExportDelegate`, `convertLegacyHttpOptions`) and `@opentelemetry/otlp-transformer` (the response's
 * decoder, the exporter's metrics helper). Null when one is missing or not of the expected shape.
 */
const exporterParts = (exporterPackage: string): ExporterParts | null => {
  try {
    const require = createRequire(createRequire(import.meta.url).resolve(exporterPackage));
    const base = require('@opentelemetry/otlp-exporter-base') as Partial<ExporterParts>;
    const http = require('@opentelemetry/otlp-exporter-base/node-http') as Partial<ExporterParts>;
    const transformer = require('@opentelemetry/otlp-transformer') as { TraceExporterMetricsHelper?: unknown; ProtobufTraceSerializer?: { deserializeResponse?: ExporterParts['deserializeResponse'] } };
    const deserialize = transformer.ProtobufTraceSerializer?.deserializeResponse;
    if (typeof base.OTLPExporterBase !== 'function' || typeof http.createOtlpHttpExportDelegate !== 'function' || typeof http.convertLegacyHttpOptions !== 'function') return null;
    if (typeof deserialize !== 'function' || transformer.TraceExporterMetricsHelper === undefined) return null;
    return {
      OTLPExporterBase: base.OTLPExporterBase,
      createOtlpHttpExportDelegate: http.createOtlpHttpExportDelegate,
      convertLegacyHttpOptions: http.convertLegacyHttpOptions,
      TraceExporterMetricsHelper: transformer.TraceExporterMetricsHelper,
      deserializeResponse: (data) => deserialize.call(transformer.ProtobufTraceSerializer, data),
    };
  } catch {
    return null;
  }
};

/**
 * The `http/protobuf` exporter of derived spans: the official OTLP/HTTP transport of
 * `@opentelemetry/exporter-trace-otlp-proto` — its HTTP agent, retries, timeout, headers and compression, read from
 * the same `OTEL_EXPORTER_OTLP_*` settings — with the request body encoded from the derived spans by
 * {@link OtlpProtobufEncoder} (the bytes the exporter's own serializer writes of the same spans as SDK spans, without
 * building them). Its `export` takes `DerivedSpan`s and `StoreAppendSpan`s (written straight from the operation). Null when the installed exporter's packages do not offer the
 * parts it is assembled from: the caller then uses the SDK's exporter (`createOtlpSpanExporter`).
 */
export const createDerivedProtobufExporter = async (
  endpoint: string,
  serviceName: string,
  missing: (packageName: string, cause: unknown) => Error,
): Promise<SpanExporterLike | null> => {
  const encoder = new OtlpProtobufEncoder(serviceName);
  return createProtobufTransport(endpoint, (spans) => encoder.encode(spans as readonly OperationSpanSource[]), missing);
};

/**
 * The official OTLP/HTTP `http/protobuf` transport (`OTLPExporterBase` over `createOtlpHttpExportDelegate`, with the
 * exporter package's HTTP agent, retries, timeout, headers, compression and `OTEL_EXPORTER_OTLP_*` settings) for
 * `endpoint`'s traces URL, whose request body is what `serializeRequest` makes of the items handed to `export`. The
 * live export uses it with the derived spans' encoder ({@link createDerivedProtobufExporter}); the transport's
 * benchmark with a fixed body. Null when the installed exporter's packages do not offer the parts it is assembled from.
 * @internal
 */
export const createProtobufTransport = async (
  endpoint: string,
  serializeRequest: (items: readonly unknown[]) => Uint8Array,
  missing: (packageName: string, cause: unknown) => Error,
): Promise<SpanExporterLike | null> => {
  const name = OTLP_EXPORTER_PACKAGE['http/protobuf'];
  await importOptionalPackage(name, (cause) => missing(name, cause));
  const parts = exporterParts(name);
  if (parts === null) return null;
  const serializer = { serializeRequest, deserializeResponse: parts.deserializeResponse };
  const options = parts.convertLegacyHttpOptions({ url: otlpTracesUrl(endpoint) }, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new parts.OTLPExporterBase(parts.createOtlpHttpExportDelegate(options, serializer, 'otlp_http_span_exporter', parts.TraceExporterMetricsHelper, undefined));
};
