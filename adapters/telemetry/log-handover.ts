import type { EventId } from '../../domain/brand.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import { EVENT_TYPES, type LogEvent } from '../../domain/events.js';
import { SpanSourceField, spanSourceFields } from '../../projections/telemetry/span-source.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * The log as the runtime's thread hands it to the export worker: one hand-over ({@link HandOver}) per message, the
 * records in order, each a kind then its fields, in three channels — the numbers in one `Float64Array` (transferred
 * with the message, not cloned), the strings one after the other in one string (each string's length among the
 * numbers), and the few objects in an array. An event travels as what the span derivation reads of it
 * (`span-source.ts`) and nothing else: its seq, time and type (a known type as its index in `EVENT_TYPES`), then,
 * only for the types whose fields the derivation reads, its data's JSON — the string the session log already made for
 * the store — its metadata (a splice's, for the actor) and its chain hash (a turn's end). No event id, no
 * `ignorable`, no hash or metadata of the other events, no data of a `step/end`, a `request/header`, a
 * `user/message`…: per event the runtime's thread writes a few numbers and appends a few strings, and the message's
 * structured clone copies one flat string and the rare objects (the numbers' buffer is moved, not copied). The worker
 * rebuilds each event with the fields it was handed, parsing its data when it is first read. The export worker never
 * has a content hook (a function of the runtime's thread), so a `user/message`'s data is not handed over. Store
 * appends and fsync batches travel as numbers and strings too; the rarer records keep their objects: a history (a
 * session going live with events), a projection batch.
 * @internal
 */

/** The kinds of record. @internal */
export const LogRecordKind = { Observe: 0, Follow: 1, Forget: 2, Operation: 3, Append: 4 } as const;

/** A known event type's code: its index in `EVENT_TYPES` (an unknown type: `-1 - its length`, its string in the text). */
const TYPE_CODES: ReadonlyMap<string, number> = new Map(EVENT_TYPES.map((t, i) => [t, i]));
/** The export worker derives without a content hook. */
const WITHOUT_CONTENT = false;
/** The numbers a hand-over's buffer holds before it grows (it grows by doubling). */
const INITIAL_NUMBERS = 2304;

/**
 * One hand-over as posted: `numbers[0..length)` the records' numbers (a string's place holds its length, or -1 for a
 * missing one; a missing number is NaN), `text` the records' strings end to end, `objects` the records' objects in
 * order. `numbers.buffer` is transferred with the message.
 * @internal
 */
export interface HandOver {
  readonly numbers: Float64Array;
  readonly length: number;
  readonly text: string;
  readonly objects: readonly unknown[];
}

/**
 * The hand-over being written on the runtime's thread. {@link HandOverWriter.size} counts its values the way a flat
 * array of them would (a number, a string or an object each one), so that a hand-over goes when as many values wait
 * whatever their channel.
 * @internal
 */
export class HandOverWriter {
  #numbers = new Float64Array(INITIAL_NUMBERS);
  #length = 0;
  #text = '';
  #objects: unknown[] = [];

  /** The values written since the last {@link HandOverWriter.take}. */
  get size(): number {
    return this.#length + this.#objects.length;
  }

  /** Room for `n` more numbers. */
  reserve(n: number): void {
    if (this.#length + n <= this.#numbers.length) return;
    const grown = new Float64Array(Math.max(this.#numbers.length * 2, this.#length + n));
    grown.set(this.#numbers.subarray(0, this.#length));
    this.#numbers = grown;
  }

  /** Writes a number (after {@link HandOverWriter.reserve}). */
  number(v: number): void {
    this.#numbers[this.#length++] = v;
  }

  /** Writes a string: its length among the numbers, its characters in the text (after `reserve`). */
  string(v: string): void {
    this.#numbers[this.#length++] = v.length;
    this.#text += v;
  }

  /** Appends characters to the text, their length written elsewhere (an unknown type's, in its code). */
  chars(v: string): void {
    this.#text += v;
  }

  /** Writes a string or its absence (-1) (after `reserve`). */
  optionalString(v: string | null | undefined): void {
    if (v === null || v === undefined) this.#numbers[this.#length++] = -1;
    else this.string(v);
  }

  /** Writes an object. */
  object(v: unknown): void {
    this.#objects.push(v);
  }

  /** What was written, and a fresh buffer for what comes next. */
  take(): HandOver {
    const taken: HandOver = { numbers: this.#numbers, length: this.#length, text: this.#text, objects: this.#objects };
    this.#numbers = new Float64Array(INITIAL_NUMBERS);
    this.#length = 0;
    this.#text = '';
    this.#objects = [];
    return taken;
  }

  /** Drops what was written. */
  clear(): void {
    this.#length = 0;
    this.#text = '';
    this.#objects = [];
  }
}

/**
 * Writes an `Observe` record: kind, session id, seq, time, type (its code, or for an unknown type `-1 - its length`
 * and its string), then what the span derivation reads of an event of this type, in this order: the data's JSON
 * (`dataJson` when known, else serialized here), the metadata or null (an object), the hash or its absence.
 * @internal
 */
export const pushObserve = (w: HandOverWriter, sessionId: string, e: LogEvent, dataJson: string | undefined): void => {
  const type = e.type;
  w.reserve(7);
  w.number(LogRecordKind.Observe);
  w.string(sessionId);
  w.number(e.seq);
  w.number(e.time);
  const code = TYPE_CODES.get(type);
  if (code !== undefined) w.number(code);
  else {
    w.number(-1 - type.length);
    w.chars(type);
  }
  const fields = spanSourceFields(type, WITHOUT_CONTENT);
  if (fields === 0) return;
  if ((fields & SpanSourceField.Data) !== 0) w.string(dataJson ?? JSON.stringify(e.data));
  if ((fields & SpanSourceField.Metadata) !== 0) w.object(e.metadata ?? null);
  if ((fields & SpanSourceField.Hash) !== 0) w.optionalString(e.hash);
};

/** Writes a `Follow` record: kind, session id, the history as it is now (a copy: the runtime's array grows). @internal */
export const pushFollow = (w: HandOverWriter, sessionId: string, history: readonly LogEvent[]): void => {
  w.reserve(2);
  w.number(LogRecordKind.Follow);
  w.string(sessionId);
  w.object(history.slice());
};

/** Writes a `Forget` record: kind, session id. @internal */
export const pushForget = (w: HandOverWriter, sessionId: string): void => {
  w.reserve(2);
  w.number(LogRecordKind.Forget);
  w.string(sessionId);
};

/**
 * Writes a store operation. An append or an fsync batch (one per write-behind batch of events: the frequent ones)
 * travels as an `Append` record of numbers and strings — kind, operation, system, collection, start time, end time,
 * events, then appends (NaN when absent), first seq (NaN when absent) and error (or its absence) — so the clone walks
 * no object; a projection batch (its positions are bigints) as an `Operation` record: kind, the store operation.
 * @internal
 */
export const pushOperation = (w: HandOverWriter, op: StoreOperation): void => {
  if (op.position !== undefined || op.headPosition !== undefined || op.partition !== undefined || op.projectionVersion !== undefined) {
    w.reserve(1);
    w.number(LogRecordKind.Operation);
    w.object(op);
    return;
  }
  w.reserve(10);
  w.number(LogRecordKind.Append);
  w.string(op.operation);
  w.string(op.system);
  w.string(op.collection);
  w.number(op.startTime);
  w.number(op.endTime);
  w.number(op.events);
  w.number(op.appends ?? NaN);
  w.number(op.firstSeq ?? NaN);
  w.optionalString(op.error);
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
      this.#json = null; // a slice of the hand-over's text: not kept once parsed (it would keep the whole text)
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
 * A string of its own with the characters of `s`: a slice of a hand-over's text may be a view of the whole text
 * (V8 keeps a long enough slice as one), and what outlives the hand-over must not keep the text alive.
 */
const ownCopy = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

/**
 * Reads a hand-over's records in order into `sink`, each event rebuilt with what the span derivation reads of it (a
 * {@link HandedEvent}: its data parsed when first read). `sessionIds`, kept by the reader from one hand-over to the
 * next: each followed session's id as a string of its own (the follower keeps a session's id as long as it follows
 * the session, and a slice of one hand-over's text would keep that whole text as long); a `Forget` record drops it.
 * @internal
 */
export const readHandOver = (h: HandOver, sink: LogRecordSink, sessionIds: Map<string, string> = new Map()): void => {
  const n = h.numbers;
  const text = h.text;
  const objects = h.objects;
  let i = 0;
  let t = 0;
  let o = 0;
  /** The string whose length is `n[i]`, next in the text (null for -1), `i` moved past it. */
  const str = (): string => {
    const len = n[i++]!;
    const s = text.slice(t, t + len);
    t += len;
    return s;
  };
  const optionalStr = (): string | null => (n[i] === -1 ? (i++, null) : str());
  const sessionId = (): string => {
    const id = str();
    let own = sessionIds.get(id);
    if (own === undefined) {
      own = ownCopy(id);
      sessionIds.set(own, own); // the key too: a slice as the key would keep the text
    }
    return own;
  };
  while (i < h.length) {
    const kind = n[i++];
    switch (kind) {
      case LogRecordKind.Observe: {
        const id = sessionId();
        const seq = n[i++]!;
        const time = n[i++]!;
        const code = n[i++]!;
        let type: string;
        if (code >= 0) type = EVENT_TYPES[code]!;
        else {
          type = text.slice(t, t - 1 - code);
          t += -1 - code;
        }
        const fields = spanSourceFields(type, WITHOUT_CONTENT);
        const json = (fields & SpanSourceField.Data) !== 0 ? str() : null;
        const event = new HandedEvent(seq, time, type, json);
        if ((fields & SpanSourceField.Metadata) !== 0) {
          const metadata = objects[o++] as EventMetadata | null;
          if (metadata !== null) (event as { metadata?: EventMetadata }).metadata = metadata;
        }
        if ((fields & SpanSourceField.Hash) !== 0) {
          const hash = optionalStr();
          if (hash !== null) (event as { hash?: string }).hash = hash;
        }
        sink.observe(id, event as unknown as LogEvent);
        break;
      }
      case LogRecordKind.Follow: {
        const id = sessionId();
        sink.follow(id, objects[o++] as LogEvent[]);
        break;
      }
      case LogRecordKind.Forget: {
        const id = str();
        sessionIds.delete(id);
        sink.forget(id);
        break;
      }
      case LogRecordKind.Operation:
        sink.storeOperation(objects[o++] as StoreOperation);
        break;
      case LogRecordKind.Append: {
        const operation = str() as StoreOperation['operation'];
        const system = str();
        const collection = str();
        const op: Mutable<StoreOperation> = { operation, system, collection, startTime: n[i]!, endTime: n[i + 1]!, events: n[i + 2]! };
        const appends = n[i + 3]!;
        const firstSeq = n[i + 4]!;
        i += 5;
        if (!Number.isNaN(appends)) op.appends = appends;
        if (!Number.isNaN(firstSeq)) op.firstSeq = firstSeq;
        const error = optionalStr();
        if (error !== null) op.error = error;
        sink.storeOperation(op);
        break;
      }
      default:
        throw new Error(`export thread: unknown log record ${String(kind)}`);
    }
  }
  if (t !== text.length || o !== objects.length) throw new Error(`export thread: a hand-over read ${t} of ${text.length} characters and ${o} of ${objects.length} objects`);
};
