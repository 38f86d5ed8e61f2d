import { readOtlpTraceRequest } from './otlp-protobuf-reader.js';

/**
 * Decoding what an OTLP/HTTP receiver gets, JSON or protobuf, into one plain form of the spans (hex ids, times as
 * nanosecond strings, attributes as a record), so that the two encodings and `steerlog trace` compare equal. The
 * protobuf side is read from the OTLP proto definitions' field numbers (`otlp-protobuf-reader.ts`), independently of
 * the SDK package that encoded it.
 */

type Json = Record<string, unknown>;
const anyValue = (v: Json): unknown => {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return String(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Json[] }).values ?? []).map(anyValue);
  return undefined;
};
const attrs = (list: unknown): Record<string, unknown> => Object.fromEntries(((list as Json[] | undefined) ?? []).map((a) => [a.key as string, anyValue(a.value as Json)]));
const nanos = (v: unknown): string => BigInt(String(v)).toString();
/** An id as OTLP/JSON writes it: hex (protobuf carries bytes). */
const hex = (v: unknown): string => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v ?? ''));

/** The spans of an OTLP/JSON `ExportTraceServiceRequest`. */
export const decodeOtlpJson = (body: Json) =>
  ((body.resourceSpans as Json[] | undefined) ?? []).flatMap((rs) =>
    ((rs.scopeSpans as Json[] | undefined) ?? []).flatMap((ss) =>
      ((ss.spans as Json[] | undefined) ?? []).map((s) => ({
        scope: (ss.scope as Json).name,
        traceId: hex(s.traceId),
        spanId: hex(s.spanId),
        parentSpanId: hex(s.parentSpanId) || null,
        name: s.name,
        kind: s.kind,
        start: nanos(s.startTimeUnixNano),
        end: nanos(s.endTimeUnixNano),
        attributes: attrs(s.attributes),
        events: ((s.events as Json[] | undefined) ?? []).map((e) => ({ name: e.name, time: nanos(e.timeUnixNano), attributes: attrs(e.attributes) })),
        links: ((s.links as Json[] | undefined) ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: attrs(l.attributes) })),
        status: { code: (s.status as Json | undefined)?.code ?? 0, message: (s.status as Json | undefined)?.message || undefined },
      })),
    ),
  );

/** The spans of an OTLP protobuf `ExportTraceServiceRequest` (the body of an `application/x-protobuf` request). */
export const decodeOtlpProtobuf = (bytes: Uint8Array) => decodeOtlpJson(readOtlpTraceRequest(bytes));

/** The spans of one OTLP/HTTP request body, by its content type. */
export const decodeOtlpBody = (contentType: string, body: Buffer) =>
  contentType.startsWith('application/x-protobuf') ? decodeOtlpProtobuf(body) : decodeOtlpJson(JSON.parse(body.toString('utf8')) as Json);
