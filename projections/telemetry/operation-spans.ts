import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import { fnv1a64Hex, spanIdOf, traceIdOf } from './span-ids.js';
import type { DerivedSpan, SpanAttributeValue } from './span-types.js';

/**
 * A store operation as a span, after the OpenTelemetry database conventions of the pinned semantic-conventions
 * version (`db.system.name`, `db.operation.name`, `db.collection.name`, `db.operation.batch.size`, `error.type`):
 * - an append of a session's events → `append {session}` in the session's trace (a root span: the write-behind
 *   runs beside the turn, not inside one of its spans), id from the session and the seq it starts at and the
 *   attempt;
 * - an fsync batch (a group commit over several sessions) → `fsync`, a trace of its own;
 * - a projection batch → `projection-batch {projection}`, a trace of its own, with the positions it committed.
 * These spans are live only: they are not in the log, so `steerlog trace` of a past session does not have them.
 */

/** The span of one store operation; `n` tells apart operations that would otherwise share an id (a retried append). */
export const operationSpan = (op: StoreOperation, n: number): DerivedSpan => {
  const attributes: Record<string, SpanAttributeValue> = {
    'db.system.name': op.system,
    'db.operation.name': op.operation,
  };
  if (op.collection !== '') attributes['db.collection.name'] = op.collection;
  if (op.events > 1) attributes['db.operation.batch.size'] = op.events;
  attributes['steerlog.db.events'] = op.events;
  if (op.appends !== undefined) attributes['steerlog.db.appends'] = op.appends;
  if (op.error !== undefined) attributes['error.type'] = op.error;
  const session = op.operation === 'append' && op.collection !== '';
  if (session) {
    attributes['steerlog.session.id'] = op.collection;
    if (op.firstSeq !== undefined) {
      attributes['steerlog.seq.first'] = op.firstSeq;
      attributes['steerlog.seq.last'] = op.firstSeq + Math.max(0, op.events - 1);
    }
  }
  if (op.position !== undefined) attributes['steerlog.projection.position'] = op.position.toString();
  if (op.headPosition !== undefined) attributes['steerlog.projection.head_position'] = op.headPosition.toString();
  if (op.partition !== undefined) attributes['steerlog.projection.partition'] = op.partition;
  if (op.projectionVersion !== undefined) attributes['steerlog.projection.version'] = op.projectionVersion;
  const key = `${op.operation}/${op.collection}/${op.projectionVersion ?? ''}/${op.partition ?? ''}/${op.startTime}/${n}`;
  const traceId = session ? traceIdOf(op.collection) : traceIdOf(`steerlog.db/${key}`);
  const spanId = session ? spanIdOf(op.collection, `db.append:${n}`, op.firstSeq ?? 0) : fnv1a64Hex(`steerlog/db-span/${key}`);
  return {
    traceId,
    spanId: /^0+$/.test(spanId) ? '0000000000000001' : spanId,
    parentSpanId: null,
    name: op.collection !== '' ? `${op.operation} ${op.collection}` : op.operation,
    kind: op.system === 'postgresql' ? 'client' : 'internal',
    startTime: op.startTime,
    endTime: Math.max(op.startTime, op.endTime),
    attributes,
    events: [],
    links: [],
    status: op.error !== undefined ? { code: 'error', message: op.error } : { code: 'unset' },
  };
};
