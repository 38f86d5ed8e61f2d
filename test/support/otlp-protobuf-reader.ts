/**
 * A reader of the OTLP trace request's protobuf encoding (`opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`,
 * https://github.com/open-telemetry/opentelemetry-proto, `trace/v1/trace.proto` and `common/v1/common.proto`), written
 * from the proto definitions' field numbers and the protobuf wire format alone, so that what a receiver decodes does
 * not depend on the SDK package that encoded it. It yields the request in the shape of its OTLP/JSON encoding: ids as
 * bytes (`Uint8Array`), 64-bit integers as decimal strings, enums as numbers, repeated fields as arrays (empty when
 * absent), fields at their default left out — what `decodeOtlpJson` takes. Unknown fields are skipped; a truncated or
 * malformed message throws.
 */

type Json = Record<string, unknown>;

/** The wire types of the protobuf encoding. */
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

/** One field of a message: its number, wire type and value (a varint as a bigint, a LEN field's bytes, an I64/I32 field's bytes). */
interface Field {
  readonly no: number;
  readonly wire: number;
  readonly varint: bigint;
  readonly bytes: Uint8Array;
}

const readVarint = (buf: Uint8Array, at: { pos: number }): bigint => {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (at.pos >= buf.length) throw new Error('otlp protobuf: truncated varint');
    const b = buf[at.pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
    if (shift > 63n) throw new Error('otlp protobuf: varint longer than 10 bytes');
  }
};

const take = (buf: Uint8Array, at: { pos: number }, n: number): Uint8Array => {
  if (at.pos + n > buf.length) throw new Error('otlp protobuf: truncated field');
  const out = buf.subarray(at.pos, at.pos + n);
  at.pos += n;
  return out;
};

/** The fields of one message, in wire order. */
const fields = (buf: Uint8Array): Field[] => {
  const at = { pos: 0 };
  const out: Field[] = [];
  const none = new Uint8Array(0);
  while (at.pos < buf.length) {
    const tag = Number(readVarint(buf, at));
    const no = tag >>> 3;
    const wire = tag & 7;
    if (no === 0) throw new Error('otlp protobuf: field number 0');
    switch (wire) {
      case VARINT:
        out.push({ no, wire, varint: readVarint(buf, at), bytes: none });
        break;
      case I64:
        out.push({ no, wire, varint: 0n, bytes: take(buf, at, 8) });
        break;
      case LEN:
        out.push({ no, wire, varint: 0n, bytes: take(buf, at, Number(readVarint(buf, at))) });
        break;
      case I32:
        out.push({ no, wire, varint: 0n, bytes: take(buf, at, 4) });
        break;
      default:
        throw new Error(`otlp protobuf: wire type ${wire} (field ${no})`);
    }
  }
  return out;
};

const utf8 = new TextDecoder('utf-8', { fatal: true });
const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
const string = (f: Field): string => utf8.decode(f.bytes);
const fixed64 = (f: Field): string => view(f.bytes).getBigUint64(0, true).toString();
const double = (f: Field): number => view(f.bytes).getFloat64(0, true);
const int64 = (f: Field): string => BigInt.asIntN(64, f.varint).toString();
const uint = (f: Field): number => Number(BigInt.asUintN(32, f.varint));
/** A copy of a bytes field (the message's buffer may be reused by its reader). */
const bytes = (f: Field): Uint8Array => Uint8Array.from(f.bytes);

/**
 * Decodes a message with `decodeField` for each known field number (`repeated` ones gathered into arrays, present
 * even when empty); a field whose wire type is not the one expected throws.
 */
const message = (
  buf: Uint8Array,
  known: Readonly<Record<number, readonly [name: string, wire: number, decode: (f: Field) => unknown, repeated?: true]>>,
): Json => {
  const out: Json = {};
  for (const spec of Object.values(known)) if (spec[3] === true) out[spec[0]] = [];
  for (const f of fields(buf)) {
    const spec = known[f.no];
    if (spec === undefined) continue;
    const [name, wire, decode, repeated] = spec;
    if (f.wire !== wire) throw new Error(`otlp protobuf: field ${name} (${f.no}) has wire type ${f.wire}, not ${wire}`);
    if (repeated === true) (out[name] as unknown[]).push(decode(f));
    else out[name] = decode(f);
  }
  return out;
};

// common/v1/common.proto
const anyValue = (f: Field): Json =>
  message(f.bytes, {
    1: ['stringValue', LEN, string],
    2: ['boolValue', VARINT, (x) => x.varint !== 0n],
    3: ['intValue', VARINT, int64],
    4: ['doubleValue', I64, double],
    5: ['arrayValue', LEN, (x) => message(x.bytes, { 1: ['values', LEN, anyValue, true] })],
    6: ['kvlistValue', LEN, (x) => message(x.bytes, { 1: ['values', LEN, keyValue, true] })],
    7: ['bytesValue', LEN, bytes],
  });
const keyValue = (f: Field): Json => message(f.bytes, { 1: ['key', LEN, string], 2: ['value', LEN, anyValue] });
const scope = (f: Field): Json =>
  message(f.bytes, { 1: ['name', LEN, string], 2: ['version', LEN, string], 3: ['attributes', LEN, keyValue, true], 4: ['droppedAttributesCount', VARINT, uint] });
// resource/v1/resource.proto
const resource = (f: Field): Json => message(f.bytes, { 1: ['attributes', LEN, keyValue, true], 2: ['droppedAttributesCount', VARINT, uint] });
// trace/v1/trace.proto
const event = (f: Field): Json =>
  message(f.bytes, { 1: ['timeUnixNano', I64, fixed64], 2: ['name', LEN, string], 3: ['attributes', LEN, keyValue, true], 4: ['droppedAttributesCount', VARINT, uint] });
const link = (f: Field): Json =>
  message(f.bytes, {
    1: ['traceId', LEN, bytes],
    2: ['spanId', LEN, bytes],
    3: ['traceState', LEN, string],
    4: ['attributes', LEN, keyValue, true],
    5: ['droppedAttributesCount', VARINT, uint],
    6: ['flags', I32, (x) => view(x.bytes).getUint32(0, true)],
  });
const status = (f: Field): Json => message(f.bytes, { 2: ['message', LEN, string], 3: ['code', VARINT, (x) => Number(x.varint)] });
const span = (f: Field): Json =>
  message(f.bytes, {
    1: ['traceId', LEN, bytes],
    2: ['spanId', LEN, bytes],
    3: ['traceState', LEN, string],
    4: ['parentSpanId', LEN, bytes],
    5: ['name', LEN, string],
    6: ['kind', VARINT, (x) => Number(x.varint)],
    7: ['startTimeUnixNano', I64, fixed64],
    8: ['endTimeUnixNano', I64, fixed64],
    9: ['attributes', LEN, keyValue, true],
    10: ['droppedAttributesCount', VARINT, uint],
    11: ['events', LEN, event, true],
    12: ['droppedEventsCount', VARINT, uint],
    13: ['links', LEN, link, true],
    14: ['droppedLinksCount', VARINT, uint],
    15: ['status', LEN, status],
    16: ['flags', I32, (x) => view(x.bytes).getUint32(0, true)],
  });
const scopeSpans = (f: Field): Json => message(f.bytes, { 1: ['scope', LEN, scope], 2: ['spans', LEN, span, true], 3: ['schemaUrl', LEN, string] });
const resourceSpans = (f: Field): Json => message(f.bytes, { 1: ['resource', LEN, resource], 2: ['scopeSpans', LEN, scopeSpans, true], 3: ['schemaUrl', LEN, string] });

/** An `ExportTraceServiceRequest`'s bytes as a plain object in the OTLP/JSON shape (see the module's doc). */
export const readOtlpTraceRequest = (buf: Uint8Array): Json => message(buf, { 1: ['resourceSpans', LEN, resourceSpans, true] });
