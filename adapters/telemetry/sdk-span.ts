import { STEERLOG_SCOPE } from '../../projections/telemetry/otlp-json.js';
import { GENAI_SEMCONV_SCHEMA_URL, type DerivedSpan, type DerivedSpanEvent, type DerivedSpanLink, type SpanAttributes } from '../../projections/telemetry/span-types.js';

/**
 * A derived span as the OpenTelemetry SDK's `ReadableSpan` (what a `SpanExporter` takes), with the derivation's ids
 * and times. Built once per span and cheaply: one object of a fixed shape, its `spanContext()` a method of the class
 * (no closure per span), the derivation's attributes, events and links shared, not copied (a derived span is never
 * changed once it is handed out).
 */

/** Epoch ms as the SDK's `HrTime` ([seconds, nanoseconds]). */
export const hrTime = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

const SPAN_KIND = { internal: 0, client: 2 } as const; // @opentelemetry/api SpanKind
const SAMPLED = 1;
const OK_STATUS = Object.freeze({ code: 0 });
const SCOPE = Object.freeze({ name: STEERLOG_SCOPE, schemaUrl: GENAI_SEMCONV_SCHEMA_URL });
const NONE: readonly never[] = Object.freeze([]);

/** A span context as the SDK states it. */
interface SdkSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

/** A span event as the SDK states it. */
interface SdkSpanEvent {
  readonly name: string;
  readonly time: [number, number];
  readonly attributes: SpanAttributes;
}

/** A link as the SDK states it. */
interface SdkLink {
  readonly context: SdkSpanContext;
  readonly attributes: SpanAttributes;
}

const sdkEvent = (e: DerivedSpanEvent): SdkSpanEvent => ({ name: e.name, time: hrTime(e.time), attributes: e.attributes });
const sdkLink = (l: DerivedSpanLink): SdkLink => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: SAMPLED }, attributes: l.attributes });

/** One derived span as the SDK's `ReadableSpan` (structurally: the SDK is an optional peer, never imported here). */
export class SdkSpan {
  readonly name: string;
  readonly kind: number;
  readonly parentSpanContext: SdkSpanContext | undefined;
  readonly startTime: [number, number];
  readonly endTime: [number, number];
  readonly duration: [number, number];
  readonly status: { readonly code: number; readonly message?: string };
  readonly attributes: SpanAttributes;
  readonly links: readonly SdkLink[];
  readonly events: readonly SdkSpanEvent[];
  readonly ended = true;
  readonly instrumentationScope = SCOPE;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly #context: SdkSpanContext;

  constructor(
    s: DerivedSpan,
    readonly resource: unknown,
  ) {
    this.name = s.name;
    this.kind = SPAN_KIND[s.kind];
    this.#context = { traceId: s.traceId, spanId: s.spanId, traceFlags: SAMPLED };
    this.parentSpanContext = s.parentSpanId !== null ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: SAMPLED } : undefined;
    this.startTime = hrTime(s.startTime);
    this.endTime = hrTime(s.endTime);
    this.duration = hrTime(s.endTime - s.startTime);
    this.status = s.status.code === 'error' ? (s.status.message !== undefined ? { code: 2, message: s.status.message } : { code: 2 }) : OK_STATUS;
    this.attributes = s.attributes;
    this.links = s.links.length === 0 ? NONE : s.links.map(sdkLink);
    this.events = s.events.length === 0 ? NONE : s.events.map(sdkEvent);
  }

  /** The span's context: the derived trace and span ids, sampled. */
  spanContext(): SdkSpanContext {
    return this.#context;
  }
}
