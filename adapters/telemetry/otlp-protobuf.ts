import { STEERLOG_SCOPE } from '../../projections/telemetry/otlp-json.js';
import { StoreAppendSpan, type AppendStreamIds, type OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import { GENAI_SEMCONV_SCHEMA_URL, type DerivedSpan, type SpanAttributes } from '../../projections/telemetry/span-types.js';
import { anyValue, I32, I64, LEN, tag, VARINT, varintBytes, varintSize, Writer } from './protobuf-writer.js';

/**
 * The OTLP/HTTP protobuf body of derived spans (`opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`),
 * encoded straight from the derivation's spans: written from the field numbers of the public opentelemetry-proto
 * definitions (`collector/trace/v1/trace_service.proto`, `trace/v1/trace.proto`, `common/v1/common.proto`,
 * `resource/v1/resource.proto`) and the protobuf wire format. Its bytes are those the SDK's
 * `ProtobufTraceSerializer` makes of the same spans as `SdkSpan`s (one resource, one scope, fields in field-number
 * order, the zero counts and the span flags written out, minimal length prefixes) — a test holds the two equal — so
 * the live export sends what it sent through the SDK's encoder, without building an SDK span per derived span, in
 * one pass over the spans (no size-estimation pass), with each attribute key's bytes encoded once.
 */

/** Span flags as the SDK writes them: the trace flags (sampled) and "has is_remote" (0x100), not remote. */
const SPAN_FLAGS = 0x101;
/** OTLP `SpanKind` of a derived span's kind (`SPAN_KIND_INTERNAL` = 1, `SPAN_KIND_CLIENT` = 3). */
const KIND: Readonly<Record<DerivedSpan['kind'], number>> = { internal: 1, client: 3 };
/** OTLP `Status.StatusCode`: unset 0, error 2. */
const STATUS_ERROR = 2;
/** The most attribute keys whose encoding is kept (the derivation uses a few dozen; beyond, the cache starts over). */
const MAX_KEYS = 4096;

/**
 * Encodes derived spans as OTLP/HTTP protobuf request bodies, for one resource (`service.name`) and steerlog's
 * instrumentation scope. Not reentrant (one buffer); each body returned is its own copy.
 */
export class OtlpProtobufEncoder {
  readonly #w = new Writer();
  /** Each attribute key's `KeyValue.key` field (tag, length, UTF-8), encoded once. */
  readonly #keys = new Map<string, Uint8Array>();
  /** `ResourceSpans.resource` and the start of `ScopeSpans` (its `scope` field), the same in every request. */
  readonly #resource: Uint8Array;
  readonly #scope: Uint8Array;
  /** `ScopeSpans.schema_url`, after the spans. */
  readonly #schemaUrl: Uint8Array;
  /** Each stream's append-span fields (`#appendSpan`), and each store system's. */
  readonly #streams = new Map<string, StreamFields>();
  readonly #systems = new Map<string, Uint8Array>();

  constructor(serviceName: string) {
    const w = this.#w;
    // Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2 }
    w.uvarint(tag(1, LEN));
    let at = w.open(1);
    this.#attributes({ 'service.name': serviceName }, 1);
    w.uvarint(tag(2, VARINT));
    w.uvarint(0);
    w.close(at, 1);
    this.#resource = w.buf.slice(0, w.pos);
    w.pos = 0;
    // InstrumentationScope { string name = 1 } (no version, no attributes)
    w.uvarint(tag(1, LEN));
    at = w.open(1);
    w.uvarint(tag(1, LEN));
    w.string(STEERLOG_SCOPE);
    w.close(at, 1);
    this.#scope = w.buf.slice(0, w.pos);
    w.pos = 0;
    w.uvarint(tag(3, LEN));
    w.string(GENAI_SEMCONV_SCHEMA_URL);
    this.#schemaUrl = w.buf.slice(0, w.pos);
    w.pos = 0;
  }

  /**
   * The `ExportTraceServiceRequest` of `spans` (empty bytes for no spans, as the SDK's serializer). A
   * {@link StoreAppendSpan} is written straight from its store operation: the bytes of its `toSpan()`, without
   * building that span.
   */
  encode(spans: readonly OperationSpanSource[]): Uint8Array {
    if (spans.length === 0) return new Uint8Array(0);
    const w = this.#w;
    // the request's three nested headers are written last, in front of the spans: room for them first
    const head = 3 * 6 + this.#resource.length + this.#scope.length;
    w.pos = 0;
    w.need(head);
    w.pos = head;
    for (const span of spans) {
      w.uvarint(tag(2, LEN)); // ScopeSpans.spans
      const at = w.open(2);
      if (span instanceof StoreAppendSpan) this.#appendSpan(span);
      else this.#span(span);
      w.close(at, 2);
    }
    w.need(this.#schemaUrl.length);
    w.buf.set(this.#schemaUrl, w.pos);
    w.pos += this.#schemaUrl.length;
    const end = w.pos;
    // ScopeSpans = scope, spans, schema_url; ResourceSpans = resource, scope_spans; the request = resource_spans
    const scopeSpansLength = this.#scope.length + (end - head);
    const resourceSpansLength = this.#resource.length + 1 + varintSize(scopeSpansLength) + scopeSpansLength;
    const prefix = [tag(1, LEN), ...varintBytes(resourceSpansLength), ...this.#resource, tag(2, LEN), ...varintBytes(scopeSpansLength), ...this.#scope];
    const start = head - prefix.length;
    w.buf.set(prefix, start);
    return w.buf.slice(start, end);
  }

  #span(s: DerivedSpan): void {
    const w = this.#w;
    w.need(64);
    w.uvarint(tag(1, LEN)); // Span.trace_id
    w.hexBytes(s.traceId);
    w.uvarint(tag(2, LEN));
    w.hexBytes(s.spanId);
    if (s.parentSpanId !== null && s.parentSpanId !== '') {
      w.uvarint(tag(4, LEN));
      w.hexBytes(s.parentSpanId);
    }
    w.uvarint(tag(5, LEN));
    w.string(s.name);
    w.uvarint(tag(6, VARINT));
    w.uvarint(KIND[s.kind]);
    w.uvarint(tag(7, I64));
    w.time(s.startTime);
    w.uvarint(tag(8, I64));
    w.time(s.endTime);
    this.#attributes(s.attributes, 9);
    w.uvarint(tag(10, VARINT)); // dropped_attributes_count
    w.uvarint(0);
    for (const e of s.events) {
      w.uvarint(tag(11, LEN)); // Span.Event { fixed64 time_unix_nano = 1; string name = 2; attributes = 3; dropped = 4 }
      const at = w.open(1);
      w.uvarint(tag(1, I64));
      w.time(e.time);
      w.uvarint(tag(2, LEN));
      w.string(e.name);
      this.#attributes(e.attributes, 3);
      w.uvarint(tag(4, VARINT));
      w.uvarint(0);
      w.close(at, 1);
    }
    w.uvarint(tag(12, VARINT)); // dropped_events_count
    w.uvarint(0);
    for (const l of s.links) {
      w.uvarint(tag(13, LEN)); // Span.Link { trace_id = 1; span_id = 2; attributes = 4; dropped = 5; fixed32 flags = 6 }
      const at = w.open(1);
      w.uvarint(tag(1, LEN));
      w.hexBytes(l.traceId);
      w.uvarint(tag(2, LEN));
      w.hexBytes(l.spanId);
      this.#attributes(l.attributes, 4);
      w.uvarint(tag(5, VARINT));
      w.uvarint(0);
      w.uvarint(tag(6, I32));
      w.fixed32(SPAN_FLAGS);
      w.close(at, 1);
    }
    this.#spanEnd(s.status.code === 'error', s.status.message);
  }

  /** A span's last fields: `dropped_links_count`, `status` (an error's message when not empty) and `flags`. */
  #spanEnd(error: boolean, message: string | undefined): void {
    const w = this.#w;
    w.uvarint(tag(14, VARINT)); // dropped_links_count
    w.uvarint(0);
    w.uvarint(tag(15, LEN)); // Status { string message = 2; StatusCode code = 3 }
    const st = w.open(1);
    if (error && message !== undefined && message !== '') {
      w.uvarint(tag(2, LEN));
      w.string(message);
    }
    w.uvarint(tag(3, VARINT));
    w.uvarint(error ? STATUS_ERROR : 0);
    w.close(st, 1);
    w.uvarint(tag(16, I32)); // flags
    w.fixed32(SPAN_FLAGS);
  }

  /**
   * The `Span` of a store append, written from its operation: the fields and attributes, in the order
   * `operationSpan` makes them, of `a.toSpan()`, whose bytes these are (a test holds them equal). What is the same
   * for every append of a stream (the trace id, the name, the collection and session attributes) and of a store
   * (the system and operation attributes) is encoded once and copied.
   */
  #appendSpan(a: StoreAppendSpan): void {
    const w = this.#w;
    const op = a.op;
    const stream = this.#streamFields(a);
    const system = this.#systemFields(op.system);
    w.need(64);
    w.raw(stream.trace);
    w.uvarint(tag(2, LEN));
    w.hexBytes(a.spanId);
    w.raw(stream.name);
    w.uvarint(tag(6, VARINT));
    w.uvarint(KIND[op.system === 'postgresql' ? 'client' : 'internal']);
    w.uvarint(tag(7, I64));
    w.time(op.startTime);
    w.uvarint(tag(8, I64));
    w.time(Math.max(op.startTime, op.endTime));
    // attributes: db.system.name, db.operation.name, db.collection.name, [db.operation.batch.size],
    // steerlog.db.events, [steerlog.db.appends], [error.type], steerlog.session.id, [steerlog.seq.first, .last]
    w.raw(system);
    w.raw(stream.collection);
    if (op.events > 1) this.#attribute('db.operation.batch.size', op.events, 9);
    this.#attribute('steerlog.db.events', op.events, 9);
    if (op.appends !== undefined) this.#attribute('steerlog.db.appends', op.appends, 9);
    if (op.error !== undefined) this.#attribute('error.type', op.error, 9);
    w.raw(stream.session);
    if (op.firstSeq !== undefined) {
      this.#attribute('steerlog.seq.first', op.firstSeq, 9);
      this.#attribute('steerlog.seq.last', op.firstSeq + Math.max(0, op.events - 1), 9);
    }
    w.uvarint(tag(10, VARINT)); // dropped_attributes_count
    w.uvarint(0);
    w.uvarint(tag(12, VARINT)); // dropped_events_count (no events, no links)
    w.uvarint(0);
    this.#spanEnd(op.error !== undefined, op.error);
  }

  /** A stream's append-span fields, encoded on first use (written in place, their bytes kept). */
  #streamFields(a: StoreAppendSpan): StreamFields {
    const ids = a.ids;
    let f = this.#streams.get(ids.stream);
    if (f !== undefined && f.ids === ids) return f;
    if (this.#streams.size >= MAX_KEYS) this.#streams.clear();
    const w = this.#w;
    const from = w.pos;
    w.uvarint(tag(1, LEN));
    w.hexBytes(ids.traceId);
    const trace = w.buf.slice(from, w.pos);
    w.pos = from;
    w.uvarint(tag(5, LEN));
    w.string(ids.appendName);
    const name = w.buf.slice(from, w.pos);
    w.pos = from;
    this.#attributes({ 'db.collection.name': ids.stream }, 9);
    const collection = w.buf.slice(from, w.pos);
    w.pos = from;
    this.#attributes({ 'steerlog.session.id': ids.stream }, 9);
    const session = w.buf.slice(from, w.pos);
    w.pos = from;
    f = { ids, trace, name, collection, session };
    this.#streams.set(ids.stream, f);
    return f;
  }

  /** A store's `db.system.name` and `db.operation.name` (append) attributes, encoded on first use. */
  #systemFields(system: string): Uint8Array {
    let f = this.#systems.get(system);
    if (f !== undefined) return f;
    if (this.#systems.size >= MAX_KEYS) this.#systems.clear();
    const w = this.#w;
    const from = w.pos;
    this.#attributes({ 'db.system.name': system, 'db.operation.name': 'append' }, 9);
    f = w.buf.slice(from, w.pos);
    w.pos = from;
    this.#systems.set(system, f);
    return f;
  }

  /** Each attribute as a `KeyValue` { string key = 1; AnyValue value = 2 } in field `field`. */
  #attributes(attributes: SpanAttributes, field: number): void {
    for (const key in attributes) {
      if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
      this.#attribute(key, attributes[key], field);
    }
  }

  /** One attribute as a `KeyValue` { string key = 1; AnyValue value = 2 } in field `field`. */
  #attribute(key: string, value: unknown, field: number): void {
    const w = this.#w;
    let k = this.#keys.get(key);
    if (k === undefined) {
      if (this.#keys.size >= MAX_KEYS) this.#keys.clear();
      k = keyField(key);
      this.#keys.set(key, k);
    }
    w.uvarint(tag(field, LEN));
    const kv = w.open(1);
    w.need(k.length + 2);
    w.buf.set(k, w.pos);
    w.pos += k.length;
    w.buf[w.pos++] = tag(2, LEN);
    const val = w.open(1);
    anyValue(w, value);
    w.close(val, 1);
    w.close(kv, 1);
  }
}

/** A stream's append-span fields as encoded (`Span.trace_id`, `Span.name`, two `Span.attributes` entries), for its ids. */
interface StreamFields {
  readonly ids: AppendStreamIds;
  readonly trace: Uint8Array;
  readonly name: Uint8Array;
  readonly collection: Uint8Array;
  readonly session: Uint8Array;
}

/** `KeyValue.key`: its tag, length and UTF-8 bytes. */
const keyField = (key: string): Uint8Array => {
  const w = new Writer(key.length * 3 + 8);
  w.uvarint(tag(1, LEN));
  w.string(key);
  return w.buf.slice(0, w.pos);
};

