import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { createDerivedProtobufExporter } from '../../../adapters/telemetry/otlp-exporter.js';
import { describe, expect, it } from 'vitest';
import { OtlpProtobufEncoder } from '../../../adapters/telemetry/otlp-protobuf.js';
import { SdkSpan } from '../../../adapters/telemetry/sdk-span.js';
import type { SpanExporterLike } from '../../../adapters/telemetry/span-export-queue.js';
import type { LogEvent } from '../../../domain/events.js';
import { deriveSpans } from '../../../projections/telemetry/derive-spans.js';
import { createOperationSpans, createOperationSpanSources, StoreAppendSpan } from '../../../projections/telemetry/operation-spans.js';
import type { StoreOperation } from '../../../runtime/ports/store-operations.js';
import { exportContentAsIs, type DerivedSpan, type SpanAttributes } from '../../../projections/telemetry/span-types.js';
import { decodeOtlpProtobuf } from '../../support/otlp-decode.js';

/** The SDK's encoding of the same spans: each as the `SdkSpan` the SDK path exports, one resource. */
const sdkBytes = (spans: readonly DerivedSpan[], serviceName: string): Uint8Array => {
  const resource = resourceFromAttributes({ 'service.name': serviceName });
  return ProtobufTraceSerializer.serializeRequest(spans.map((s) => new SdkSpan(s, resource)) as never) ?? new Uint8Array(0);
};

const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('hex'));
/** Text of every kind: ASCII, any code point, lone surrogates (encoded as U+FFFD by both), long (length prefixes ≥ 128). */
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.string({ minLength: 100, maxLength: 20_000 }),
);
const number = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(2 ** 32, 2 ** 32 - 1, -(2 ** 32), 2 ** 53, -(2 ** 53), 2 ** 62, -(2 ** 63), 2 ** 63, 1e20, -0, 0.5, NaN, Infinity),
  fc.double(),
);
const value = fc.oneof(text, number, fc.boolean(), fc.array(text, { maxLength: 4 }));
const attributes: fc.Arbitrary<SpanAttributes> = fc.dictionary(fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('gen_ai.request.model', 'steerlog.session.id', 'é', '1', '0')), value, { maxKeys: 8 });
/** Epoch ms: whole, fractional, around now and far off. */
const time = fc.oneof(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.double({ min: 0, max: 4_102_444_800_000, noNaN: true }), fc.constantFrom(0, 999.9999999, 1_764_000_000_000.5));
const span: fc.Arbitrary<DerivedSpan> = fc.record({
  traceId: hex(16),
  spanId: hex(8),
  parentSpanId: fc.oneof(fc.constant(null), hex(8)),
  name: text,
  kind: fc.constantFrom('internal', 'client'),
  startTime: time,
  endTime: time,
  attributes,
  events: fc.array(fc.record({ name: text, time, attributes }), { maxLength: 3 }),
  links: fc.array(fc.record({ traceId: hex(16), spanId: hex(8), attributes }), { maxLength: 2 }),
  status: fc.oneof(
    fc.constant({ code: 'unset' as const }),
    fc.constant({ code: 'error' as const }),
    fc.record({ code: fc.constantFrom('unset' as const, 'error' as const), message: text }),
  ),
});

/** Store operations of every kind: appends (plain or not) to a few streams of any text, fsyncs, projection batches. */
const storeOperation: fc.Arbitrary<StoreOperation> = fc.record(
  {
    operation: fc.constantFrom('append' as const, 'append' as const, 'fsync' as const, 'projection-batch' as const),
    system: fc.oneof(fc.constantFrom('steerlog.jsonl', 'postgresql', 'steerlog.memory', 'sqlite'), text),
    collection: fc.oneof(fc.constantFrom('', 's1', 's2', '0af76519-16cd-43dd-8448-eb211c80319c'), text),
    startTime: time,
    endTime: time,
    events: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 2 ** 40 })),
    appends: fc.integer({ min: 0, max: 50 }),
    firstSeq: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.maxSafeInteger()),
    partition: fc.integer({ min: 0, max: 7 }),
    projectionVersion: fc.integer({ min: 0, max: 3 }),
    position: fc.bigInt({ min: 0n, max: 1n << 40n }),
    error: fc.oneof(fc.constantFrom('fenced', 'ECONNRESET', ''), text),
  },
  { requiredKeys: ['operation', 'system', 'collection', 'startTime', 'endTime', 'events'] },
);
/** Plain appends (the ones written straight from the operation), as the write-behind tells of them, and any other operation. */
const appendOrOperation: fc.Arbitrary<StoreOperation> = fc.oneof(
  fc.record(
    {
      operation: fc.constant('append' as const),
      system: fc.oneof(fc.constantFrom('steerlog.jsonl', 'postgresql', 'steerlog.memory'), text),
      collection: fc.oneof(fc.constantFrom('s1', 's2', '0af76519-16cd-43dd-8448-eb211c80319c'), text.filter((t) => t !== '')),
      startTime: time,
      endTime: time,
      events: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 2 ** 40 })),
      appends: fc.integer({ min: 0, max: 5 }),
      firstSeq: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.maxSafeInteger()),
      error: fc.oneof(fc.constantFrom('fenced', ''), text),
    },
    { requiredKeys: ['operation', 'system', 'collection', 'startTime', 'endTime', 'events'] },
  ),
  storeOperation,
);

describe('OTLP protobuf encoding of derived spans', () => {
  it('writes a store append straight from its operation: the bytes of its built span and of the SDK, among other spans (property)', () => {
    const direct = new OtlpProtobufEncoder('steerlog');
    const built = new OtlpProtobufEncoder('steerlog');
    fc.assert(
      fc.property(fc.array(fc.oneof({ arbitrary: appendOrOperation.map((op) => ({ op })), weight: 3 }, { arbitrary: span, weight: 1 }), { maxLength: 16 }), (items) => {
        const sources = createOperationSpanSources();
        const spanner = createOperationSpans();
        const lazy = items.map((i) => ('op' in i ? sources(i.op) : i));
        const spans = items.map((i) => ('op' in i ? spanner(i.op) : i));
        const bytes = Buffer.from(direct.encode(lazy));
        expect(bytes.equals(Buffer.from(built.encode(spans)))).toBe(true);
        expect(bytes.equals(Buffer.from(sdkBytes(spans, 'steerlog')))).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('writes the same append twice alike, its stream and system fields kept from the first (and a stream whose ids change re-encoded)', () => {
    const encoder = new OtlpProtobufEncoder('svc');
    const op: StoreOperation = { operation: 'append', system: 'steerlog.jsonl', collection: 's1', startTime: 1_764_000_000_000.25, endTime: 1_764_000_000_001.5, events: 3, firstSeq: 9 };
    const first = createOperationSpanSources();
    const a = first(op);
    expect(a).toBeInstanceOf(StoreAppendSpan);
    const once = Buffer.from(encoder.encode([a]));
    expect(Buffer.from(encoder.encode([a, a])).equals(Buffer.from(sdkBytes([(a as StoreAppendSpan).toSpan(), (a as StoreAppendSpan).toSpan()], 'svc')))).toBe(true);
    expect(Buffer.from(encoder.encode([a])).equals(once)).toBe(true);
    // another spanner: other ids objects for the same stream, the same bytes
    const again = createOperationSpanSources()(op);
    expect(Buffer.from(encoder.encode([again])).equals(once)).toBe(true);
  });

  it('writes the bytes the SDK serializer writes of the same spans (property)', () => {
    const encoder = new OtlpProtobufEncoder('steerlog');
    fc.assert(
      fc.property(fc.array(span, { maxLength: 12 }), (spans) => {
        expect(Buffer.from(encoder.encode(spans)).equals(Buffer.from(sdkBytes(spans, 'steerlog')))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the SDK bytes of a derived session and a service name of any length, request after request', () => {
    const at = 1_764_000_000_000;
    const spans: DerivedSpan[] = [
      {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        parentSpanId: null,
        name: 'invoke_agent',
        kind: 'internal',
        startTime: at,
        endTime: at + 1234.5,
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'steerlog.session.id': 's-1', 'steerlog.seq.first': 0, 'steerlog.seq.last': 12, 'steerlog.turn.end': 'idle' },
        events: [{ name: 'steerlog.inbox.admitted', time: at + 1, attributes: { 'steerlog.message.id': 'm1', 'steerlog.message.class': 'followup' } }],
        links: [],
        status: { code: 'unset' },
      },
      {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: '00f067aa0ba902b7',
        parentSpanId: 'b7ad6b7169203331',
        name: 'chat scripted',
        kind: 'client',
        startTime: at + 2,
        endTime: at + 900,
        attributes: { 'gen_ai.request.model': 'scripted', 'gen_ai.usage.input_tokens': 9, 'gen_ai.response.finish_reasons': ['tool_calls'] },
        events: [],
        links: [{ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '53995c3f42cd8ad8', attributes: { 'steerlog.session.id': 'child' } }],
        status: { code: 'error', message: 'model refused' },
      },
    ];
    for (const serviceName of ['steerlog', 'x'.repeat(200)]) {
      const encoder = new OtlpProtobufEncoder(serviceName);
      for (let i = 0; i < 3; i++) expect(Buffer.from(encoder.encode(spans)).equals(Buffer.from(sdkBytes(spans, serviceName)))).toBe(true);
      // a request large enough that the buffer grows and the headers' lengths take 3 bytes
      const many = Array.from({ length: 2000 }, (_, k) => spans[k % 2]!);
      expect(Buffer.from(encoder.encode(many)).equals(Buffer.from(sdkBytes(many, serviceName)))).toBe(true);
    }
    expect(new OtlpProtobufEncoder('steerlog').encode([])).toEqual(new Uint8Array(0));
    // what a receiver decodes (the reader written from the proto definitions alone)
    const decoded = decodeOtlpProtobuf(new OtlpProtobufEncoder('steerlog').encode(spans));
    expect(decoded).toEqual(decodeOtlpProtobuf(sdkBytes(spans, 'steerlog')));
    expect(decoded.map((d) => [d.name, d.parentSpanId, d.status.message])).toEqual([
      ['invoke_agent', null, undefined],
      ['chat scripted', 'b7ad6b7169203331', 'model refused'],
    ]);
  });

  it.each(['queue-steer-context', 'inbox-edits', 'blocked-and-dropped'])('encodes the spans of docs/examples/%s.jsonl (content exported) as the SDK does', (name) => {
    const events = readFileSync(new URL(`../../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LogEvent);
    const { spans, error } = deriveSpans(events, { content: exportContentAsIs });
    expect(error).toBeNull();
    expect(spans.some((s) => s.events.length > 0)).toBe(true);
    expect(Buffer.from(new OtlpProtobufEncoder('steerlog').encode(spans)).equals(Buffer.from(sdkBytes(spans, 'steerlog')))).toBe(true);
  });

  it('the http/protobuf exporter of derived spans sends, through the official transport, the request the SDK exporter sends', async () => {
    const bodies: { contentType: string; body: Buffer }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ contentType: String(req.headers['content-type']), body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const events = readFileSync(new URL('../../../docs/examples/inbox-edits.jsonl', import.meta.url), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LogEvent);
      const { spans } = deriveSpans(events);
      const ours = await createDerivedProtobufExporter(endpoint, 'svc', (name) => new Error(name));
      expect(ours).not.toBeNull();
      const sdk = new OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
      const resource = resourceFromAttributes({ 'service.name': 'svc' });
      const send = (exporter: SpanExporterLike, items: unknown[]) =>
        new Promise<number>((resolve) => exporter.export(items, (r) => resolve(r.code)));
      expect(await send(ours!, [...spans])).toBe(0);
      expect(await send(sdk as unknown as SpanExporterLike, spans.map((s) => new SdkSpan(s, resource)))).toBe(0);
      await Promise.all([ours!.shutdown(), sdk.shutdown()]);
      expect(bodies).toHaveLength(2);
      expect(bodies[0]!.contentType).toBe(bodies[1]!.contentType);
      expect(bodies[0]!.body.length).toBeGreaterThan(0);
      expect(bodies[0]!.body.equals(bodies[1]!.body)).toBe(true);
    } finally {
      server.close();
    }
  });
});
