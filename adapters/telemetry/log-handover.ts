import type { EventId } from '../../domain/brand.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import type { LogEvent } from '../../domain/events.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * The log as the runtime's thread hands it to the export worker: one flat array per hand-over, the records in order,
 * each a kind then its fields. An event travels as its envelope's primitives and its data's JSON — the string the
 * session log already made for the store — so the runtime's thread walks no event object: per event it pushes a few
 * values, and the hand-over's structured clone copies numbers and flat strings (a third of the cost of cloning the
 * event objects, or of `JSON.stringify` of them, measured on the runtime's thread). The worker rebuilds the event,
 * parsing its data when it is first read. Store appends and fsync batches travel as primitives too; the rarer
 * records keep their objects: a history (a session going live with events), a projection batch.
 * @internal
 */

/** The kinds of record. @internal */
export const LogRecordKind = { Observe: 0, Follow: 1, Forget: 2, Operation: 3, Append: 4 } as const;

/**
 * Pushes an `Observe` record: kind, session id, seq, id, time, type, the data's JSON (`dataJson` when known, else
 * serialized here), ignorable (1 or 0), metadata or null, hash or null.
 * @internal
 */
export const pushObserve = (records: unknown[], sessionId: string, e: LogEvent, dataJson: string | undefined): void => {
  records.push(LogRecordKind.Observe, sessionId, e.seq, e.id, e.time, e.type, dataJson ?? JSON.stringify(e.data), e.ignorable === true ? 1 : 0, e.metadata ?? null, e.hash ?? null);
};

/** Pushes a `Follow` record: kind, session id, the history as it is now (a copy: the runtime's array grows). @internal */
export const pushFollow = (records: unknown[], sessionId: string, history: readonly LogEvent[]): void => {
  records.push(LogRecordKind.Follow, sessionId, history.slice());
};

/** Pushes a `Forget` record: kind, session id. @internal */
export const pushForget = (records: unknown[], sessionId: string): void => {
  records.push(LogRecordKind.Forget, sessionId);
};

/**
 * Pushes a store operation. An append or an fsync batch (one per write-behind batch of events: the frequent ones)
 * travels as an `Append` record of primitives — kind, operation, system, collection, start time, end time, events,
 * then appends, first seq and error or null each — so the clone walks no object; a projection batch (its positions
 * are bigints) as an `Operation` record: kind, the store operation.
 * @internal
 */
export const pushOperation = (records: unknown[], op: StoreOperation): void => {
  if (op.position !== undefined || op.headPosition !== undefined || op.partition !== undefined || op.projectionVersion !== undefined) records.push(LogRecordKind.Operation, op);
  else records.push(LogRecordKind.Append, op.operation, op.system, op.collection, op.startTime, op.endTime, op.events, op.appends ?? null, op.firstSeq ?? null, op.error ?? null);
};

/** An event as it is being rebuilt. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A {@link HandedEvent}'s data not parsed yet. */
const UNPARSED: unique symbol = Symbol('unparsed');

/**
 * An event as the worker rebuilds it: the envelope's fields as read, the data parsed from its JSON when it is first
 * read (`data`, a getter of the class, then the parsed value every time). The span derivation reads the data of the
 * events that open or close a span, not of the others (a `step/end`, a `chain/head`, a `user/message` without a
 * content hook): their JSON is never parsed. Optional fields (`ignorable`, `metadata`, `hash`) are set only when
 * present, as on the runtime's event.
 * @internal
 */
export class HandedEvent {
  #json: string;
  #data: unknown = UNPARSED;

  constructor(
    readonly seq: number,
    readonly id: EventId,
    readonly time: number,
    readonly type: string,
    json: string,
  ) {
    this.#json = json;
  }

  /** The event's data, parsed from its JSON on the first read. */
  get data(): unknown {
    if (this.#data === UNPARSED) this.#data = JSON.parse(this.#json) as unknown;
    return this.#data;
  }
}

/** What the worker does with each record it reads back. @internal */
export interface LogRecordSink {
  observe(sessionId: string, event: LogEvent): void;
  follow(sessionId: string, history: readonly LogEvent[]): void;
  forget(sessionId: string): void;
  storeOperation(op: StoreOperation): void;
}

/**
 * Reads a hand-over's records in order into `sink`, each event rebuilt as the runtime made it (a {@link HandedEvent}:
 * its data parsed when first read).
 * @internal
 */
export const readHandOver = (records: readonly unknown[], sink: LogRecordSink): void => {
  let i = 0;
  while (i < records.length) {
    switch (records[i]) {
      case LogRecordKind.Observe: {
        const event = new HandedEvent(records[i + 2] as number, records[i + 3] as EventId, records[i + 4] as number, records[i + 5] as string, records[i + 6] as string);
        if (records[i + 7] === 1) (event as { ignorable?: true }).ignorable = true;
        const metadata = records[i + 8] as EventMetadata | null;
        if (metadata !== null) (event as { metadata?: EventMetadata }).metadata = metadata;
        const hash = records[i + 9] as string | null;
        if (hash !== null) (event as { hash?: string }).hash = hash;
        sink.observe(records[i + 1] as string, event as unknown as LogEvent);
        i += 10;
        break;
      }
      case LogRecordKind.Follow:
        sink.follow(records[i + 1] as string, records[i + 2] as LogEvent[]);
        i += 3;
        break;
      case LogRecordKind.Forget:
        sink.forget(records[i + 1] as string);
        i += 2;
        break;
      case LogRecordKind.Operation:
        sink.storeOperation(records[i + 1] as StoreOperation);
        i += 2;
        break;
      case LogRecordKind.Append: {
        const op: Mutable<StoreOperation> = {
          operation: records[i + 1] as StoreOperation['operation'],
          system: records[i + 2] as string,
          collection: records[i + 3] as string,
          startTime: records[i + 4] as number,
          endTime: records[i + 5] as number,
          events: records[i + 6] as number,
        };
        if (records[i + 7] !== null) op.appends = records[i + 7] as number;
        if (records[i + 8] !== null) op.firstSeq = records[i + 8] as number;
        if (records[i + 9] !== null) op.error = records[i + 9] as string;
        sink.storeOperation(op);
        i += 10;
        break;
      }
      default:
        throw new Error(`export thread: unknown log record ${String(records[i])}`);
    }
  }
};
