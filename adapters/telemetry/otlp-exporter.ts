import { importOptionalPackage } from '../optional-package.js';
import { otlpTracesUrl } from './otlp-http.js';
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
