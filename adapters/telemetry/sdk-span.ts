import { STEERLOG_SCOPE } from '../../projections/telemetry/otlp-json.js';
import { GENAI_SEMCONV_SCHEMA_URL, type DerivedSpan, type DerivedSpanEvent, type DerivedSpanLink, type SpanAttributes } from '../../projections/telemetry/span-types.js';

/**
 * A derived span as the OpenTelemetry SDK's `ReadableSpan` (what a `SpanExporter` takes), with the derivation's ids
 * and times. Built once per span and cheaply: one small object of a fixed shape, its `spanContext()` a method of the
 * class (no closure per span), the derivation's attributes, events and links shared, not copied (a derived span is
 * never changed once it is handed out).
 */

/** Epoch ms as the SDK's `HrTime` ([seconds, nanoseconds]). */
export const hrTime = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

const SPAN_KIND = { internal: 0, client: 2 } as const; // @opentelemetry/api SpanKind
const SAMPLED = 1;
const OK_STATUS = Object.freeze({ code: 0 });
const ERROR_STATUS = Object.freeze({ code: 2 });
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

/**
 * One derived span as the SDK's `ReadableSpan` (structurally: the SDK is an optional peer, never imported here). The
 * exporter reads most fields once, so a span holds only what differs from one span to the next — the derived span,
 * its resource, its two times and its parent's context — and the rest is read through the prototype: the constant
 * fields (`ended`, the scope, the dropped counts) are shared, the span's context, status, events, links and duration
 * are made when read. Every field of a `ReadableSpan` reads as before; the span is never changed once made.
 */
export class SdkSpan {
  readonly startTime: [number, number];
  readonly endTime: [number, number];
  /** The parent's context (same trace, sampled), or undefined for a root span (the exporter reads it thrice). */
  readonly parentSpanContext: SdkSpanContext | undefined;
  declare readonly ended: true;
  declare readonly instrumentationScope: typeof SCOPE;
  declare readonly droppedAttributesCount: 0;
  declare readonly droppedEventsCount: 0;
  declare readonly droppedLinksCount: 0;

  constructor(
    /** The derived span this one states. */
    readonly derived: DerivedSpan,
    readonly resource: unknown,
  ) {
    this.startTime = hrTime(derived.startTime);
    this.endTime = hrTime(derived.endTime);
    this.parentSpanContext = derived.parentSpanId !== null ? { traceId: derived.traceId, spanId: derived.parentSpanId, traceFlags: SAMPLED } : undefined;
  }

  /** The span's name. */
  get name(): string {
    return this.derived.name;
  }

  /** The SDK's `SpanKind`: internal or client. */
  get kind(): number {
    return SPAN_KIND[this.derived.kind];
  }

  /** `endTime - startTime` as an `HrTime`. */
  get duration(): [number, number] {
    return hrTime(this.derived.endTime - this.derived.startTime);
  }

  /** The status as the SDK states it: OK (0) when unset, else error (2) with its message. */
  get status(): { readonly code: number; readonly message?: string } {
    const st = this.derived.status;
    return st.code === 'error' ? (st.message !== undefined ? { code: 2, message: st.message } : ERROR_STATUS) : OK_STATUS;
  }

  /** The derivation's attributes (shared, not copied). */
  get attributes(): SpanAttributes {
    return this.derived.attributes;
  }

  /** The links to other traces' spans (a child session's). */
  get links(): readonly SdkLink[] {
    const links = this.derived.links;
    return links.length === 0 ? NONE : links.map(sdkLink);
  }

  /** The span's events (inbox activity), their times as `HrTime`. */
  get events(): readonly SdkSpanEvent[] {
    const events = this.derived.events;
    return events.length === 0 ? NONE : events.map(sdkEvent);
  }

  /** The span's context: the derived trace and span ids, sampled. */
  spanContext(): SdkSpanContext {
    return { traceId: this.derived.traceId, spanId: this.derived.spanId, traceFlags: SAMPLED };
  }
}
// the fields every span has alike, read through the prototype
Object.defineProperties(SdkSpan.prototype, {
  ended: { value: true },
  instrumentationScope: { value: SCOPE },
  droppedAttributesCount: { value: 0 },
  droppedEventsCount: { value: 0 },
  droppedLinksCount: { value: 0 },
});
