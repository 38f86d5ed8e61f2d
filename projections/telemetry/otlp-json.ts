import { GENAI_SEMCONV_SCHEMA_URL, type DerivedSpan, type SpanAttributes, type SpanAttributeValue } from './span-types.js';

/**
 * The OTLP/JSON encoding of an `ExportTraceServiceRequest` (the body an OTLP/HTTP receiver takes at `/v1/traces`
 * with `content-type: application/json`): ids as lowercase hex, times as decimal strings of Unix nanoseconds, 64-bit
 * integers as decimal strings, enums as their numbers. Pure: no I/O.
 */

/** An OTLP `AnyValue` in its JSON encoding. */
export type OtlpAnyValue =
  | { readonly stringValue: string }
  | { readonly boolValue: boolean }
  | { readonly intValue: string }
  | { readonly doubleValue: number }
  | { readonly arrayValue: { readonly values: readonly OtlpAnyValue[] } };

/** An OTLP `KeyValue`. */
export interface OtlpKeyValue {
  readonly key: string;
  readonly value: OtlpAnyValue;
}

/** An OTLP span in its JSON encoding. */
export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 3 client. */
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes: readonly OtlpKeyValue[];
  readonly events: readonly { readonly timeUnixNano: string; readonly name: string; readonly attributes: readonly OtlpKeyValue[] }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly attributes: readonly OtlpKeyValue[] }[];
  /** 0 unset, 2 error. */
  readonly status: { readonly code: number; readonly message?: string };
}

/** An OTLP `ExportTraceServiceRequest` in its JSON encoding. */
export interface OtlpTraceRequest {
  readonly resourceSpans: readonly {
    readonly resource: { readonly attributes: readonly OtlpKeyValue[] };
    readonly scopeSpans: readonly {
      readonly scope: { readonly name: string; readonly version?: string };
      readonly schemaUrl: string;
      readonly spans: readonly OtlpSpan[];
    }[];
  }[];
}

/** Options of {@link otlpTraceRequest}. */
export interface OtlpTraceRequestOptions {
  /** The resource's `service.name`. @defaultValue 'steerlog' */
  readonly serviceName?: string;
  /** The instrumentation scope's version (steerlog's). @defaultValue none */
  readonly scopeVersion?: string;
  /** More resource attributes (e.g. `steerlog.session.id`). @defaultValue none */
  readonly resource?: SpanAttributes;
}

/** The instrumentation scope name of the spans steerlog derives. */
export const STEERLOG_SCOPE = 'steerlog';

/** Epoch milliseconds as a decimal string of Unix nanoseconds (sub-millisecond times kept to the microsecond). */
export const unixNanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

/** One attribute value in the OTLP/JSON encoding: integers as `intValue` strings, other numbers as `doubleValue`. */
export const otlpValue = (v: SpanAttributeValue): OtlpAnyValue => {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isSafeInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map((s) => ({ stringValue: s })) } };
};

/** Attributes as OTLP key-values, in their insertion order. */
export const otlpAttributes = (attributes: SpanAttributes): OtlpKeyValue[] => Object.entries(attributes).map(([key, value]) => ({ key, value: otlpValue(value) }));

/** One derived span in the OTLP/JSON encoding. */
export const otlpSpan = (s: DerivedSpan): OtlpSpan => ({
  traceId: s.traceId,
  spanId: s.spanId,
  ...(s.parentSpanId !== null ? { parentSpanId: s.parentSpanId } : {}),
  name: s.name,
  kind: s.kind === 'client' ? 3 : 1,
  startTimeUnixNano: unixNanos(s.startTime),
  endTimeUnixNano: unixNanos(s.endTime),
  attributes: otlpAttributes(s.attributes),
  events: s.events.map((e) => ({ timeUnixNano: unixNanos(e.time), name: e.name, attributes: otlpAttributes(e.attributes) })),
  links: s.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: otlpAttributes(l.attributes) })),
  status: s.status.code === 'error' ? { code: 2, ...(s.status.message !== undefined ? { message: s.status.message } : {}) } : { code: 0 },
});

/** The `ExportTraceServiceRequest` that carries `spans` (one resource, one scope). */
export const otlpTraceRequest = (spans: readonly DerivedSpan[], options: OtlpTraceRequestOptions = {}): OtlpTraceRequest => ({
  resourceSpans: [
    {
      resource: { attributes: otlpAttributes({ 'service.name': options.serviceName ?? 'steerlog', ...(options.resource ?? {}) }) },
      scopeSpans: [
        {
          scope: { name: STEERLOG_SCOPE, ...(options.scopeVersion !== undefined ? { version: options.scopeVersion } : {}) },
          schemaUrl: GENAI_SEMCONV_SCHEMA_URL,
          spans: spans.map(otlpSpan),
        },
      ],
    },
  ],
});
