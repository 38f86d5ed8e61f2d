import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOperationSpanSources, createOperationSpans, isPlainAppend, operationSpan, StoreAppendSpan } from '../../../projections/telemetry/operation-spans.js';
import { spanIdOf, traceIdOf } from '../../../projections/telemetry/span-ids.js';
import type { StoreOperation } from '../../../runtime/ports/store-operations.js';

const operation: fc.Arbitrary<StoreOperation> = fc.record(
  {
    operation: fc.constantFrom('append' as const, 'fsync' as const, 'projection-batch' as const),
    system: fc.constantFrom('steerlog.jsonl', 'postgresql', 'steerlog.file'),
    collection: fc.constantFrom('', 's1', 's2', 'steering-per-session'),
    startTime: fc.double({ min: 1e12, max: 2e12, noNaN: true }),
    endTime: fc.double({ min: 1e12, max: 2e12, noNaN: true }),
    events: fc.integer({ min: 1, max: 50 }),
    firstSeq: fc.integer({ min: 0, max: 1000 }),
    partition: fc.integer({ min: 0, max: 7 }),
    projectionVersion: fc.integer({ min: 0, max: 3 }),
    position: fc.bigInt({ min: 0n, max: 1n << 40n }),
    error: fc.constantFrom('fenced', 'ECONNRESET'),
  },
  { requiredKeys: ['operation', 'system', 'collection', 'startTime', 'endTime', 'events'] },
);

describe('store operation spans', () => {
  it('the numbering, caching spanner gives the spans of operationSpan(op, n), n counting from 0', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 30 }), (ops) => {
        const spanner = createOperationSpans();
        ops.forEach((op, n) => expect(spanner(op)).toEqual(operationSpan(op, n)));
      }),
    );
  });

  it('the spanner of sources leaves exactly the plain appends unbuilt, each building the span operationSpan(op, n) makes (property)', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 30 }), (ops) => {
        const sources = createOperationSpanSources();
        ops.forEach((op, n) => {
          const s = sources(op);
          expect(s instanceof StoreAppendSpan).toBe(isPlainAppend(op));
          if (s instanceof StoreAppendSpan) {
            expect(s.toSpan()).toEqual(operationSpan(op, n));
            expect(s.spanId).toBe(operationSpan(op, n).spanId);
          } else expect(s).toEqual(operationSpan(op, n));
        });
      }),
    );
  });

  it('an append is a root span in its session\'s trace, its id from the session, its number and first seq; a projection batch carries its partition, version and position', () => {
    const spanner = createOperationSpans();
    spanner({ operation: 'fsync', system: 'steerlog.jsonl', collection: '', startTime: 1, endTime: 2, events: 3, appends: 2 });
    const append = spanner({ operation: 'append', system: 'steerlog.jsonl', collection: 's1', startTime: 10, endTime: 12, events: 4, firstSeq: 7 });
    expect(append).toMatchObject({ traceId: traceIdOf('s1'), spanId: spanIdOf('s1', 'db.append:1', 7), parentSpanId: null, name: 'append s1', kind: 'internal' });
    expect(append.attributes).toEqual({
      'db.system.name': 'steerlog.jsonl',
      'db.operation.name': 'append',
      'db.collection.name': 's1',
      'db.operation.batch.size': 4,
      'steerlog.db.events': 4,
      'steerlog.session.id': 's1',
      'steerlog.seq.first': 7,
      'steerlog.seq.last': 10,
    });
    const batch = spanner({ operation: 'projection-batch', system: 'postgresql', collection: 'p', startTime: 20, endTime: 25, events: 1, position: 99n, partition: 3, projectionVersion: 2 });
    expect(batch).toMatchObject({ name: 'projection-batch p', kind: 'client', startTime: 20, endTime: 25, status: { code: 'unset' } });
    expect(batch.attributes).toEqual({
      'db.system.name': 'postgresql',
      'db.operation.name': 'projection-batch',
      'db.collection.name': 'p',
      'steerlog.db.events': 1,
      'steerlog.projection.position': '99',
      'steerlog.projection.partition': 3,
      'steerlog.projection.version': 2,
    });
  });
});
