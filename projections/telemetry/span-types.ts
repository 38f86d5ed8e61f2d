/**
 * The spans steerlog derives from a session log: plain values, no OpenTelemetry SDK. An exporter (the OTLP/JSON
 * encoding of `steerlog trace`, the SDK bridge of the live runtime) turns them into its own representation; every
 * field here maps one to one onto an OTLP span.
 */

/**
 * The version of the OpenTelemetry semantic conventions for generative AI that the derived spans follow (span names
 * `invoke_agent`, `chat`, `execute_tool`; attributes `gen_ai.*`; `error.type`). steerlog's own facts are under
 * `steerlog.*`.
 */
export const GENAI_SEMCONV_VERSION = '1.37.0';

/** The schema URL of {@link GENAI_SEMCONV_VERSION}, as an OTLP scope's `schemaUrl`. */
export const GENAI_SEMCONV_SCHEMA_URL = `https://opentelemetry.io/schemas/${GENAI_SEMCONV_VERSION}`;

/** An attribute value: a string, a number (an integer is exported as an integer), a boolean or a list of strings. */
export type SpanAttributeValue = string | number | boolean | readonly string[];

/** A span's attributes by name. */
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** A timed event inside a span (an inbox admission, claim, cancellation or edit). */
export interface DerivedSpanEvent {
  readonly name: string;
  /** Epoch milliseconds: the time of the log event it comes from. */
  readonly time: number;
  readonly attributes: SpanAttributes;
}

/** A link to a span of another trace (a child session's). */
export interface DerivedSpanLink {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  readonly attributes: SpanAttributes;
}

/** What a span's status says: unset (nothing known to be wrong), or an error with a short description. */
export interface DerivedSpanStatus {
  readonly code: 'unset' | 'error';
  readonly message?: string;
}

/** The kind of a derived span, as OTLP names them: a model call is a client call, the rest is internal work. */
export type DerivedSpanKind = 'internal' | 'client';

/** One span derived from the log. Times are the times of the log events that open and close it (epoch ms). */
export interface DerivedSpan {
  /** 32 lowercase hex digits, derived from the session id: one trace per session. */
  readonly traceId: string;
  /** 16 lowercase hex digits, derived from the session id, the span's kind and the seq of the event that opens it. */
  readonly spanId: string;
  /** The parent span's id, or null for a root span (a turn, an idle stretch). */
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: DerivedSpanKind;
  /** Epoch milliseconds. */
  readonly startTime: number;
  /** Epoch milliseconds, never before `startTime`. */
  readonly endTime: number;
  readonly attributes: SpanAttributes;
  readonly events: readonly DerivedSpanEvent[];
  readonly links: readonly DerivedSpanLink[];
  readonly status: DerivedSpanStatus;
}

/** What the content hook is asked about: which kind of content, its text, and where it is in the log. */
export interface ContentField {
  /** `input`: the user messages a step added; `output`: the model's answer text; `tool-arguments`; `tool-result`. */
  readonly kind: 'input' | 'output' | 'tool-arguments' | 'tool-result';
  /** The plaintext as the log holds it (never sealed or erased content: that never reaches the hook). */
  readonly text: string;
  readonly sessionId: string;
  readonly seq: number;
}

/**
 * The redaction hook: what to export of one piece of content, or null to export nothing. Content capture is off
 * unless a hook is given; {@link exportContentAsIs} exports it unchanged.
 */
export type ContentRedaction = (field: ContentField) => string | null;

/** The hook that exports content unchanged (the operator opted in without redaction). */
export const exportContentAsIs: ContentRedaction = (field) => field.text;
