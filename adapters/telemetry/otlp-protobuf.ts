import { STEERLOG_SCOPE } from '../../projections/telemetry/otlp-json.js';
import { StoreAppendSpan, type AppendStreamIds, type OperationSpanSource } from '../../projections/telemetry/operation-spans.js';
import { GENAI_SEMCONV_SCHEMA_URL, type DerivedSpan, type SpanAttributes } from '../../projections/telemetry/span-types.js';

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

/** Protobuf wire types. */
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;
const tag = (field: number, wire: number): number => (field << 3) | wire;

/** Span flags as the SDK writes them: the trace flags (sampled) and "has is_remote" (0x100), not remote. */
const SPAN_FLAGS = 0x101;
/** OTLP `SpanKind` of a derived span's kind (`SPAN_KIND_INTERNAL` = 1, `SPAN_KIND_CLIENT` = 3). */
const KIND: Readonly<Record<DerivedSpan['kind'], number>> = { internal: 1, client: 3 };
/** OTLP `Status.StatusCode`: unset 0, error 2. */
const STATUS_ERROR = 2;
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;
/** The most attribute keys whose encoding is kept (the derivation uses a few dozen; beyond, the cache starts over). */
const MAX_KEYS = 4096;

/** The number of bytes of `v` (a non-negative integer below 2^32) as a varint. */
const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/** A growable byte buffer the request is written into, kept from one request to the next. */
class Writer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  readonly #utf8 = new TextEncoder();

  constructor(size = 64 * 1024) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  /** Room for `n` more bytes. */
  need(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A varint of a non-negative integer below 2^32. */
  uvarint(v: number): void {
    this.need(5);
    const b = this.buf;
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  /** A varint of any integer in [-2^63, 2^63): 64-bit two's complement, 10 bytes when negative. */
  int64(v: number): void {
    if (v >= 0 && v <= 0xffffffff) return this.uvarint(v);
    const neg = v < 0;
    const a = neg ? -v : v;
    let lo = a >>> 0;
    let hi = (a / 0x100000000) >>> 0;
    if (neg) {
      lo = ~lo >>> 0;
      hi = ~hi >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    this.need(10);
    const b = this.buf;
    while (hi > 0 || lo > 0x7f) {
      b[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[this.pos++] = lo;
  }

  fixed32(v: number): void {
    this.need(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  double(v: number): void {
    this.need(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** Epoch ms as the SDK states it (`hrTime`), written as the fixed64 nanoseconds since the epoch. */
  time(ms: number): void {
    // hrTime(ms) without its pair: the same two numbers, no array per time written
    const s = Math.floor(ms / 1000);
    const ns = Math.round((ms - s * 1000) * 1e6);
    // s·1e9 + ns in two 32-bit halves: s = hi16·2^16 + lo16, each product exact below 2^53
    const lo16 = s % 0x10000;
    const hi16 = (s - lo16) / 0x10000;
    const a = lo16 * 1e9 + ns; // < 2^53
    const b = hi16 * 1e9; // to be multiplied by 2^16
    const bLow16 = b % 0x10000;
    const low = a % 0x100000000 + bLow16 * 0x10000;
    const high = Math.floor(a / 0x100000000) + (b - bLow16) / 0x10000 + Math.floor(low / 0x100000000);
    this.need(8);
    this.view.setUint32(this.pos, low >>> 0, true);
    this.view.setUint32(this.pos + 4, high >>> 0, true);
    this.pos += 8;
  }

  /** A string's UTF-8 bytes, length-prefixed (ill-formed UTF-16 as the TextEncoder writes it: U+FFFD). */
  string(s: string): void {
    const n = s.length;
    // one byte reserved for the length: every string shorter than 128 bytes needs no move
    this.need(n * 3 + 5);
    const b = this.buf;
    const start = this.pos + 1;
    let p = start;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      b[p++] = c;
    }
    if (i < n) p += this.#utf8.encodeInto(s.slice(i), b.subarray(p)).written;
    this.pos = p;
    this.closeLength(start - 1, 1, p - start);
  }

  /** 16 or 8 bytes of lowercase or uppercase hex, length-prefixed. */
  hexBytes(hex: string): void {
    const n = hex.length >>> 1;
    this.need(n + 1);
    const b = this.buf;
    let p = this.pos;
    b[p++] = n;
    for (let i = 0; i < 2 * n; i += 2) b[p++] = (HEX[hex.charCodeAt(i) & 0x7f]! << 4) | HEX[hex.charCodeAt(i + 1) & 0x7f]!;
    this.pos = p;
  }

  /** Bytes as they are (a field encoded before), no length prefix. */
  raw(v: Uint8Array): void {
    this.need(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  bytes(v: Uint8Array): void {
    this.uvarint(v.length);
    this.need(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** Starts a length-delimited field's content: `reserve` bytes left for its length. Returns where the length goes. */
  open(reserve: number): number {
    this.need(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /**
   * Ends a length-delimited field opened at `at` with `reserved` bytes, its content written from `at + reserved` up
   * to `pos`: the content moves when its length takes more or fewer bytes than reserved.
   */
  close(at: number, reserved: number): void {
    this.closeLength(at, reserved, this.pos - at - reserved);
  }

  /** {@link close} of `length` content bytes at `at + reserved`, written up to `pos`; `pos` ends after them. */
  closeLength(at: number, reserved: number, length: number): void {
    const size = varintSize(length);
    const from = at + reserved;
    if (size !== reserved) {
      this.need(size - reserved);
      this.buf.copyWithin(at + size, from, from + length);
    }
    const b = this.buf;
    let v = length;
    let p = at;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p] = v;
    this.pos = at + size + length;
  }
}

/** Each hex digit's value by its character code (0–9, a–f, A–F). */
const HEX = (() => {
  const t = new Uint8Array(128);
  for (let c = 0; c < 10; c++) t[48 + c] = c;
  for (let c = 0; c < 6; c++) t[97 + c] = t[65 + c] = 10 + c;
  return t;
})();

/** An attribute value as `AnyValue`'s content. */
const anyValue = (w: Writer, v: unknown): void => {
  switch (typeof v) {
    case 'string':
      w.uvarint(tag(1, LEN));
      w.string(v);
      return;
    case 'boolean':
      w.uvarint(tag(2, VARINT));
      w.uvarint(v ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(v) && v >= MIN_INT64 && v < MAX_INT64) {
        w.uvarint(tag(3, VARINT));
        w.int64(v);
      } else {
        w.uvarint(tag(4, I64));
        w.double(v);
      }
      return;
    default:
      if (v instanceof Uint8Array) {
        w.uvarint(tag(7, LEN));
        w.bytes(v);
      } else if (Array.isArray(v)) {
        w.uvarint(tag(5, LEN)); // array_value: ArrayValue { repeated AnyValue values = 1 }
        const at = w.open(1);
        for (const item of v as unknown[]) {
          w.uvarint(tag(1, LEN));
          const it = w.open(1);
          anyValue(w, item);
          w.close(it, 1);
        }
        w.close(at, 1);
      } else if (typeof v === 'object' && v !== null) {
        w.uvarint(tag(6, LEN)); // kvlist_value: KeyValueList { repeated KeyValue values = 1 }
        const at = w.open(1);
        for (const k in v) {
          if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
          w.uvarint(tag(1, LEN));
          const kv = w.open(1);
          w.uvarint(tag(1, LEN));
          w.string(k);
          w.uvarint(tag(2, LEN));
          const val = w.open(1);
          anyValue(w, (v as Record<string, unknown>)[k]);
          w.close(val, 1);
          w.close(kv, 1);
        }
        w.close(at, 1);
      }
    // null, undefined: an empty AnyValue
  }
};

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

const varintBytes = (v: number): number[] => {
  const out: number[] = [];
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
};
