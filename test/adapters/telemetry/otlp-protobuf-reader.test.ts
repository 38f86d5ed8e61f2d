import { describe, expect, it } from 'vitest';
import { decodeOtlpProtobuf } from '../../support/otlp-decode.js';
import { readOtlpTraceRequest } from '../../support/otlp-protobuf-reader.js';

/**
 * The receiver tests' protobuf reader (`test/support/otlp-protobuf-reader.ts`) against a request encoded by another
 * encoder: the bytes below are protobufjs's encoding of one `ExportTraceServiceRequest` through the OTLP definitions
 * that `@opentelemetry/otlp-transformer` 0.212.0 generated (every kind of attribute value, a negative int, a parent,
 * an event, a link, an error status, span flags), so the reader the receiver tests decode with is checked against an
 * encoder other than the one under test.
 */
const FIXTURE = Buffer.from(
  '0aac020a1c0a1a0a0c736572766963652e6e616d65120a0a0873746565726c6f67128b020a0c0a0873746565726c6f67120012d1010a100102030405060708090a0b0c0d0e0f1012081112131415161718220821222324252627282a0663686174206d30033915cd627f7d8b7d184115ae58857d8b7d184a090a017312040a02c3a94a070a0162120210014a100a0169120b18fbffffffffffffffff014a0e0a0164120921000000000000f83f4a100a0161120b2a090a030a01780a0218075a170900c2f2837d8b7d18120265761a080a016b12030a01766a1c0a10ffeeddccbbaa99887766554433221100120800112233445566777a081204626f6f6d18028501010100001a2768747470733a2f2f6f70656e74656c656d657472792e696f2f736368656d61732f312e33372e30',
  'hex',
);

describe('the receiver tests’ OTLP protobuf reader', () => {
  it('reads a request another encoder wrote, field for field', () => {
    const request = readOtlpTraceRequest(FIXTURE) as { resourceSpans: { resource: unknown; scopeSpans: { scope: unknown; schemaUrl: string; spans: Record<string, unknown>[] }[] }[] };
    expect(request.resourceSpans).toHaveLength(1);
    const rs = request.resourceSpans[0]!;
    expect(rs.resource).toEqual({ attributes: [{ key: 'service.name', value: { stringValue: 'steerlog' } }] });
    expect(rs.scopeSpans[0]!.scope).toEqual({ name: 'steerlog', version: '', attributes: [] });
    expect(rs.scopeSpans[0]!.schemaUrl).toBe('https://opentelemetry.io/schemas/1.37.0');
    const span = rs.scopeSpans[0]!.spans[0]!;
    expect(span.startTimeUnixNano).toBe('1764720000123456789');
    expect(span.endTimeUnixNano).toBe('1764720000223456789');
    expect(span.flags).toBe(257);
    expect(span.kind).toBe(3);
  });

  it('gives the receiver tests’ plain form: hex ids, nanosecond strings, every attribute kind', () => {
    expect(decodeOtlpProtobuf(FIXTURE)).toEqual([
      {
        scope: 'steerlog',
        traceId: '0102030405060708090a0b0c0d0e0f10',
        spanId: '1112131415161718',
        parentSpanId: '2122232425262728',
        name: 'chat m',
        kind: 3,
        start: '1764720000123456789',
        end: '1764720000223456789',
        attributes: { s: 'é', b: true, i: '-5', d: 1.5, a: ['x', '7'] },
        events: [{ name: 'ev', time: '1764720000200000000', attributes: { k: 'v' } }],
        links: [{ traceId: 'ffeeddccbbaa99887766554433221100', spanId: '0011223344556677', attributes: {} }],
        status: { code: 2, message: 'boom' },
      },
    ]);
  });

  it('refuses a truncated request and a field of the wrong wire type', () => {
    expect(() => readOtlpTraceRequest(FIXTURE.subarray(0, FIXTURE.length - 3))).toThrow(/truncated/);
    // resourceSpans (field 1) as a varint instead of a message
    expect(() => readOtlpTraceRequest(Uint8Array.of(0x08, 0x01))).toThrow(/wire type 0/);
  });
});
