import type { EventId } from '../../domain/brand.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import { EVENT_TYPES, type LogEvent } from '../../domain/events.js';
import { SpanSourceField, spanSourceFields } from '../../projections/telemetry/span-source.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * The log as the runtime's thread hands it to the export worker: one flat array per hand-over, the records in order,
 * each a kind then its fields. An event travels as what the span derivation reads of it (`span-source.ts`) and
 * nothing else: its seq, time and type (a known type as its index in `EVENT_TYPES`), then, only for the types whose
 * fields the derivation reads, its data's JSON — the string the session log already made for the store — its
 * metadata (a splice's, for the actor) and its chain hash (a turn's end). No event id, no `ignorable`, no hash or
 * metadata of the other events, no data of a `step/end`, a `request/header`, a `user/message`…: per event the
 * runtime's thread pushes a few values, and the hand-over's structured clone copies numbers and few flat strings.
 * The worker rebuilds each event with the fields it was handed, parsing its data when it is first read. The export
 * worker never has a content hook (a function of the runtime's thread), so a `user/message`'s data is not handed
 * over. Store appends and fsync batches travel as primitives too; the rarer records keep their objects: a history
 * (a session going live with events), a projection batch.
 * @internal
 */

/** The kinds of record. @internal */
export const LogRecordKind = { Observe: 0, Follow: 1, Forget: 2, Operation: 3, Append: 4 } as const;

/** A known event type's code: its index in `EVENT_TYPES` (an unknown type travels as its string). */
const TYPE_CODES: ReadonlyMap<string, number> = new Map(EVENT_TYPES.map((t, i) => [t, i]));
/** The export worker derives without a content hook. */
const WITHOUT_CONTENT = false;

/**
 * Pushes an `Observe` record: kind, session id, seq, time, type (its code, or the string of an unknown type), then
 * what the span derivation reads of an event of this type, in this order: the data's JSON (`dataJson` when known,
 * else serialized here), the metadata or null, the hash or null.
 * @internal
 */
export const pushObserve = (records: unknown[], sessionId: string, e: LogEvent, dataJson: string | undefined): void => {
  const type = e.type;
  records.push(LogRecordKind.Observe, sessionId, e.seq, e.time, TYPE_CODES.get(type) ?? type);
  const fields = spanSourceFields(type, WITHOUT_CONTENT);
  if (fields === 0) return;
  if ((fields & SpanSourceField.Data) !== 0) records.push(dataJson ?? JSON.stringify(e.data));
  if ((fields & SpanSourceField.Metadata) !== 0) records.push(e.metadata ?? null);
  if ((fields & SpanSourceField.Hash) !== 0) records.push(e.hash ?? null);
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
 * An event as the worker rebuilds it: what the span derivation reads of it (`span-source.ts`), as handed over — seq,
 * time and type; the data parsed from its JSON when it is first read (`data`, a getter of the class, then the parsed
 * value every time); `metadata` and `hash` set only when handed over and present. The span derivation reads the
 * data of the events that open or close a span, not of the others: their JSON is never parsed, nor even handed
 * over. Reading the `id` of a handed event, or the data of a type whose data is not handed over, throws: it is a
 * field the derivation does not read, and `span-source.ts` says so.
 * @internal
 */
export class HandedEvent {
  #json: string | null;
  #data: unknown = UNPARSED;

  constructor(
    readonly seq: number,
    readonly time: number,
    readonly type: string,
    json: string | null,
  ) {
    this.#json = json;
  }

  /** Not handed over: the span derivation reads no event's id. Throws. */
  get id(): EventId {
    throw new Error(`export thread: the id of a handed-over ${this.type} was read; the span derivation reads no event id (span-source.ts)`);
  }

  /** The event's data, parsed from its JSON on the first read; throws for a type whose data is not handed over. */
  get data(): unknown {
    if (this.#data === UNPARSED) {
      if (this.#json === null) throw new Error(`export thread: the data of a ${this.type} was read; it is not handed over (span-source.ts)`);
      this.#data = JSON.parse(this.#json) as unknown;
    }
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
 * Reads a hand-over's records in order into `sink`, each event rebuilt with what the span derivation reads of it (a
 * {@link HandedEvent}: its data parsed when first read).
 * @internal
 */
export const readHandOver = (records: readonly unknown[], sink: LogRecordSink): void => {
  let i = 0;
  while (i < records.length) {
    switch (records[i]) {
      case LogRecordKind.Observe: {
        const code = records[i + 4] as number | string;
        const type = typeof code === 'number' ? EVENT_TYPES[code]! : code;
        const fields = spanSourceFields(type, WITHOUT_CONTENT);
        let at = i + 5;
        const json = (fields & SpanSourceField.Data) !== 0 ? (records[at++] as string) : null;
        const event = new HandedEvent(records[i + 2] as number, records[i + 3] as number, type, json);
        if ((fields & SpanSourceField.Metadata) !== 0) {
          const metadata = records[at++] as EventMetadata | null;
          if (metadata !== null) (event as { metadata?: EventMetadata }).metadata = metadata;
        }
        if ((fields & SpanSourceField.Hash) !== 0) {
          const hash = records[at++] as string | null;
          if (hash !== null) (event as { hash?: string }).hash = hash;
        }
        sink.observe(records[i + 1] as string, event as unknown as LogEvent);
        i = at;
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
