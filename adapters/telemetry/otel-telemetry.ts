import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../../domain/events.js';
import { createSpanDeriver, type SpanDeriver } from '../../projections/telemetry/derive-spans.js';
import { STEERLOG_SCOPE } from '../../projections/telemetry/otlp-json.js';
import { GENAI_SEMCONV_SCHEMA_URL, type ContentRedaction, type DerivedSpan } from '../../projections/telemetry/span-types.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { importOptionalPackage } from '../optional-package.js';
import { otlpTracesUrl } from './otlp-http.js';

/**
 * Live export through the official OpenTelemetry JS SDK: the spans the telemetry derivation completes as a session's
 * events commit go to a `BatchSpanProcessor` and its exporter (OTLP/HTTP, JSON, by default). The SDK packages are
 * optional peer dependencies, loaded only here: `@opentelemetry/sdk-trace-base`, `@opentelemetry/resources`,
 * `@opentelemetry/core` and `@opentelemetry/exporter-trace-otlp-http` (2.5.1 / 0.212.0, which run on Node 20).
 * The spans keep the derivation's ids and times, so a live export and a later `steerlog trace` of the same session
 * agree span for span.
 */

/** The OpenTelemetry SDK packages are not installed. */
export class TelemetryUnavailableError extends Error {
  readonly code = 'telemetry-unavailable' as const;
  constructor(
    readonly packageName: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`telemetry needs the optional package ${packageName}: npm install ${packageName}`, options);
    this.name = 'TelemetryUnavailableError';
  }
}
/** Is this a {@link TelemetryUnavailableError}? (by its stable `code`) */
export const isTelemetryUnavailableError = (e: unknown): e is TelemetryUnavailableError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'telemetry-unavailable';

/** Options of {@link createOtelTelemetry}. */
export interface OtelTelemetryOptions {
  /** The OTLP/HTTP endpoint (`<endpoint>/v1/traces` receives the spans). Required unless `exporter` is given. */
  readonly endpoint?: string;
  /**
   * The SDK `SpanExporter` to use instead of OTLP/HTTP (the SDK's `InMemorySpanExporter` in tests).
   * @defaultValue an `OTLPTraceExporter` for `endpoint`
   */
  readonly exporter?: unknown;
  /** The resource's `service.name`. @defaultValue 'steerlog' */
  readonly serviceName?: string;
  /** The content redaction hook; content is exported only through it. @defaultValue none: no content */
  readonly content?: ContentRedaction;
  /** Export through a processor that sends each span at once instead of in batches (tests, short runs). @defaultValue false */
  readonly simple?: boolean;
}

/** The live exporter: a {@link SessionTelemetry} for `createRuntime({ telemetry })`, and how to flush and stop it. */
export interface OtelTelemetry extends SessionTelemetry {
  /** Sends what is buffered. */
  forceFlush(): Promise<void>;
  /** Sends what is buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

interface SdkModules {
  readonly BatchSpanProcessor: new (exporter: unknown) => SpanProcessorLike;
  readonly SimpleSpanProcessor: new (exporter: unknown) => SpanProcessorLike;
}
interface SpanProcessorLike {
  onEnd(span: unknown): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Epoch ms as the SDK's `HrTime` ([seconds, nanoseconds]). */
const hrTime = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

const SPAN_KIND = { internal: 0, client: 2 } as const; // @opentelemetry/api SpanKind
const SAMPLED = 1;

/** One derived span as the SDK's `ReadableSpan`, ids and times as derived. */
const readableSpan = (s: DerivedSpan, resource: unknown): unknown => ({
  name: s.name,
  kind: SPAN_KIND[s.kind],
  spanContext: () => ({ traceId: s.traceId, spanId: s.spanId, traceFlags: SAMPLED }),
  ...(s.parentSpanId !== null ? { parentSpanContext: { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: SAMPLED } } : {}),
  startTime: hrTime(s.startTime),
  endTime: hrTime(s.endTime),
  duration: hrTime(s.endTime - s.startTime),
  status: s.status.code === 'error' ? { code: 2, ...(s.status.message !== undefined ? { message: s.status.message } : {}) } : { code: 0 },
  attributes: { ...s.attributes },
  links: s.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: SAMPLED }, attributes: { ...l.attributes } })),
  events: s.events.map((e) => ({ name: e.name, time: hrTime(e.time), attributes: { ...e.attributes } })),
  ended: true,
  resource,
  instrumentationScope: { name: STEERLOG_SCOPE, schemaUrl: GENAI_SEMCONV_SCHEMA_URL },
  droppedAttributesCount: 0,
  droppedEventsCount: 0,
  droppedLinksCount: 0,
});

const load = (name: string): Promise<unknown> => importOptionalPackage(name, (cause) => new TelemetryUnavailableError(name, { cause }));

/**
 * Creates the live OpenTelemetry exporter (loads the SDK). Each live session is folded by its own span derivation;
 * a session that goes live with history (a resume) has that history folded without exporting it.
 */
export const createOtelTelemetry = async (options: OtelTelemetryOptions): Promise<OtelTelemetry> => {
  const sdk = (await load('@opentelemetry/sdk-trace-base')) as SdkModules;
  const { resourceFromAttributes } = (await load('@opentelemetry/resources')) as { resourceFromAttributes: (a: Record<string, string>) => unknown };
  let exporter = options.exporter;
  if (exporter === undefined) {
    if (options.endpoint === undefined) throw new TypeError('createOtelTelemetry(options): an endpoint or an exporter');
    const { OTLPTraceExporter } = (await load('@opentelemetry/exporter-trace-otlp-http')) as { OTLPTraceExporter: new (config: { url: string }) => unknown };
    exporter = new OTLPTraceExporter({ url: otlpTracesUrl(options.endpoint) });
  }
  const processor = options.simple ? new sdk.SimpleSpanProcessor(exporter) : new sdk.BatchSpanProcessor(exporter);
  const resource = resourceFromAttributes({ 'service.name': options.serviceName ?? 'steerlog' });
  const derivers = new Map<string, SpanDeriver | null>();
  const deriverOf = (sessionId: string): SpanDeriver =>
    createSpanDeriver({ sessionId, ...(options.content !== undefined ? { content: options.content } : {}) });
  const push = (sessionId: string, event: LogEvent, exporting: boolean): void => {
    let d = derivers.get(sessionId);
    if (d === undefined) {
      // a session first seen mid-log cannot be folded (the fold starts at seq 0)
      d = event.seq === 0 ? deriverOf(sessionId) : null;
      derivers.set(sessionId, d);
    }
    if (d === null) return;
    const r = d.push(event);
    if (E.isLeft(r)) {
      derivers.set(sessionId, null);
      return;
    }
    if (exporting) for (const s of r.right) processor.onEnd(readableSpan(s, resource));
  };
  return {
    capturesContent: options.content !== undefined,
    follow: (sessionId, history) => {
      derivers.delete(sessionId);
      for (const e of history) push(sessionId, e, false);
    },
    observe: (sessionId, event) => push(sessionId, event, true),
    forget: (sessionId) => void derivers.delete(sessionId),
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
};
