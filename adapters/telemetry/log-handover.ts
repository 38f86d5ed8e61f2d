import type { EventId } from '../../domain/brand.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import type { LogEvent } from '../../domain/events.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

/**
 * The log as the runtime's thread hands it to the export worker: one flat array per hand-over, the records in order,
 * each a kind then its fields. An event travels as its envelope's primitives and its data's JSON — the string the
 * session log already made for the store — so the runtime's thread walks no event object: per event it pushes a few
 * values, and the hand-over's structured clone copies numbers and flat strings (a third of the cost of cloning the
 * event objects, or of `JSON.stringify` of them, measured on the runtime's thread). The worker parses the data and
 * rebuilds the event. The rarer records keep their objects: a history (a session going live with events), a store
 * operation (one per append of a batch of events).
 * @internal
 */

/** The kinds of record. @internal */
export const LogRecordKind = { Observe: 0, Follow: 1, Forget: 2, Operation: 3 } as const;

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

/** Pushes an `Operation` record: kind, the store operation. @internal */
export const pushOperation = (records: unknown[], op: StoreOperation): void => {
  records.push(LogRecordKind.Operation, op);
};

/** What the worker does with each record it reads back. @internal */
export interface LogRecordSink {
  observe(sessionId: string, event: LogEvent): void;
  follow(sessionId: string, history: readonly LogEvent[]): void;
  forget(sessionId: string): void;
  storeOperation(op: StoreOperation): void;
}

/** Reads a hand-over's records in order into `sink`, each event rebuilt as the runtime made it. @internal */
export const readHandOver = (records: readonly unknown[], sink: LogRecordSink): void => {
  let i = 0;
  while (i < records.length) {
    switch (records[i]) {
      case LogRecordKind.Observe: {
        const metadata = records[i + 8] as EventMetadata | null;
        const hash = records[i + 9] as string | null;
        const event = {
          seq: records[i + 2] as number,
          id: records[i + 3] as EventId,
          time: records[i + 4] as number,
          type: records[i + 5] as string,
          data: JSON.parse(records[i + 6] as string) as unknown,
          ...(records[i + 7] === 1 ? { ignorable: true as const } : {}),
          ...(metadata !== null ? { metadata } : {}),
          ...(hash !== null ? { hash } : {}),
        } as LogEvent;
        sink.observe(records[i + 1] as string, event);
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
      default:
        throw new Error(`export thread: unknown log record ${String(records[i])}`);
    }
  }
};
