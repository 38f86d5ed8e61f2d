import type { StoreOperation } from '../../runtime/ports/store-operations.js';
import { fnv1a64Hex, spanIdsOf, traceIdOf } from './span-ids.js';
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

/** The ids of one stream's append spans: its trace id and its span-id function, hashed once per stream. */
export interface AppendStreamIds {
  /** The stream (a session id): the append spans' `db.collection.name` and `steerlog.session.id`. */
  readonly stream: string;
  readonly traceId: string;
  readonly spanId: (what: string, seq: number) => string;
  /** The name of its append spans, `append {stream}`. */
  readonly appendName: string;
}

/** The most streams whose ids an {@link OperationSpans} keeps (it starts over beyond). */
const MAX_STREAMS = 4096;

/** Turns store operations into spans, numbering them (the `n` of {@link operationSpan}) and caching each stream's ids. */
export type OperationSpans = (op: StoreOperation) => DerivedSpan;

/**
 * An append of a session's events whose span is not built: the store operation, its number (the `n` of
 * {@link operationSpan}) and its stream's ids. {@link StoreAppendSpan.toSpan} is the span
 * {@link createOperationSpans} makes of it; an encoder may instead write that span straight from these fields (the
 * live export's protobuf encoding does: no span object, no attribute record, per append). Made only for an `append`
 * to a non-empty collection without projection fields (see {@link isPlainAppend}).
 */
export class StoreAppendSpan {
  constructor(
    readonly op: StoreOperation,
    readonly n: number,
    readonly ids: AppendStreamIds,
  ) {}

  /** The span's id: the stream's, of `db.append:{n}` and the first seq (0 when not told). */
  get spanId(): string {
    return this.ids.spanId(`db.append:${this.n}`, this.op.firstSeq ?? 0);
  }

  /** The span, as {@link createOperationSpans} makes it. */
  toSpan(): DerivedSpan {
    return spanOf(this.op, this.n, this.ids);
  }
}

/** A span ready, or an append's span to be built or encoded from its fields. */
export type OperationSpanSource = DerivedSpan | StoreAppendSpan;

/** Is `op` an append whose span a {@link StoreAppendSpan} stands for (a session's stream, no projection fields)? */
export const isPlainAppend = (op: StoreOperation): boolean =>
  op.operation === 'append' && op.collection !== '' && op.position === undefined && op.headPosition === undefined && op.partition === undefined && op.projectionVersion === undefined;

/** Numbers store operations and keeps each stream's ids (hashed once): what both spanners share. */
const numbering = (): ((op: StoreOperation) => { readonly n: number; readonly ids: AppendStreamIds | undefined }) => {
  const streams = new Map<string, AppendStreamIds>();
  let n = 0;
  const at = { n: 0, ids: undefined as AppendStreamIds | undefined };
  return (op) => {
    let ids: AppendStreamIds | undefined;
    if (op.operation === 'append' && op.collection !== '') {
      ids = streams.get(op.collection);
      if (ids === undefined) {
        if (streams.size >= MAX_STREAMS) streams.clear();
        ids = { stream: op.collection, traceId: traceIdOf(op.collection), spanId: spanIdsOf(op.collection), appendName: `append ${op.collection}` };
        streams.set(op.collection, ids);
      }
    }
    at.n = n++;
    at.ids = ids;
    return at;
  };
};

/**
 * Creates an {@link OperationSpans}: `operationSpan(op, n)` for the n-th operation it is given, with each stream's
 * trace id and span-id prefix hashed once (an append span costs one short hash instead of three over the whole key).
 */
export const createOperationSpans = (): OperationSpans => {
  const next = numbering();
  return (op) => {
    const { n, ids } = next(op);
    return spanOf(op, n, ids);
  };
};

/**
 * {@link createOperationSpans} that leaves a plain append's span unbuilt: the n-th operation given is a
 * {@link StoreAppendSpan} whose `toSpan()` is `operationSpan(op, n)` when {@link isPlainAppend}, else that span.
 */
export const createOperationSpanSources = (): ((op: StoreOperation) => OperationSpanSource) => {
  const next = numbering();
  return (op) => {
    const { n, ids } = next(op);
    return ids !== undefined && isPlainAppend(op) ? new StoreAppendSpan(op, n, ids) : spanOf(op, n, ids);
  };
};

/** The span of one store operation; `n` tells apart operations that would otherwise share an id (a retried append). */
export const operationSpan = (op: StoreOperation, n: number): DerivedSpan => spanOf(op, n, undefined);

const spanOf = (op: StoreOperation, n: number, ids: AppendStreamIds | undefined): DerivedSpan => {
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
  let traceId: string;
  let spanId: string;
  if (session) {
    // spanIdsOf(s)(what, seq) is spanIdOf(s, what, seq), never all zeros
    traceId = ids?.traceId ?? traceIdOf(op.collection);
    spanId = (ids?.spanId ?? spanIdsOf(op.collection))(`db.append:${n}`, op.firstSeq ?? 0);
  } else {
    const key = `${op.operation}/${op.collection}/${op.projectionVersion ?? ''}/${op.partition ?? ''}/${op.startTime}/${n}`;
    traceId = traceIdOf(`steerlog.db/${key}`);
    spanId = fnv1a64Hex(`steerlog/db-span/${key}`);
    if (spanId === '0000000000000000') spanId = '0000000000000001';
  }
  return {
    traceId,
    spanId,
    parentSpanId: null,
    name: ids !== undefined ? ids.appendName : op.collection !== '' ? `${op.operation} ${op.collection}` : op.operation,
    kind: op.system === 'postgresql' ? 'client' : 'internal',
    startTime: op.startTime,
    endTime: Math.max(op.startTime, op.endTime),
    attributes,
    events: NONE,
    links: NONE,
    status: op.error !== undefined ? { code: 'error', message: op.error } : UNSET,
  };
};

const UNSET = Object.freeze({ code: 'unset' as const });
const NONE: readonly never[] = Object.freeze([]);
