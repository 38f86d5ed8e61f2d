import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../domain/events.js';
import { pushFollow, pushForget, pushObserve, pushOperation, readHandOver, type LogRecordSink } from '../../../adapters/telemetry/log-handover.js';
import type { StoreOperation } from '../../../runtime/ports/store-operations.js';

/** The export worker's hand-over: records pushed on the runtime's thread, cloned to the worker, read back in order. */

const event = (seq: number, extra: Partial<LogEvent> = {}): LogEvent =>
  Object.freeze({ seq, id: `e-${seq}`, time: 1_700_000_000_000 + seq, type: 'turn/start', data: { turn: seq, note: 'quote " and \u2028 and ü' }, hash: `h${seq}`, ...extra }) as unknown as LogEvent;

const reading = (records: readonly unknown[]) => {
  const got: unknown[] = [];
  const sink: LogRecordSink = {
    // the event's envelope fields are its own, its data a getter that parses the JSON on the first read
    observe: (s, e) => void got.push(['observe', s, { ...e, data: e.data }]),
    follow: (s, h) => void got.push(['follow', s, h]),
    forget: (s) => void got.push(['forget', s]),
    storeOperation: (op) => void got.push(['op', op]),
  };
  readHandOver(structuredClone(records), sink);
  return got;
};

describe('the log hand-over to the export worker', () => {
  it('carries events as primitives and their data JSON, and rebuilds them equal, in order, with the other records', () => {
    const plain = event(1);
    const withMetadata = event(2, { metadata: { actor: { kind: 'user', id: 'u' } } } as never);
    const ignorable = Object.freeze({ seq: 3, id: 'e-3', time: 3, type: 'x/unknown', data: [1, 'two'], ignorable: true }) as unknown as LogEvent;
    const op: StoreOperation = { operation: 'projection-batch', system: 'postgresql', collection: 'p', startTime: 1.5, endTime: 2.25, events: 3, position: 12n, headPosition: 2n ** 70n };
    const records: unknown[] = [];
    pushFollow(records, 's', [event(0)]);
    pushObserve(records, 's', plain, JSON.stringify(plain.data));
    pushObserve(records, 's', withMetadata, undefined); // no data JSON known: serialized on the way
    pushOperation(records, op);
    pushObserve(records, 't', ignorable, JSON.stringify(ignorable.data));
    pushForget(records, 's');
    // an event's record holds no object but its metadata: nothing for the clone to walk
    const observeValues = records.slice(3, 13);
    expect(observeValues.every((v) => v === null || typeof v !== 'object')).toBe(true);
    expect(reading(records)).toEqual([
      ['follow', 's', [event(0)]],
      ['observe', 's', plain],
      ['observe', 's', withMetadata],
      ['op', op],
      ['observe', 't', ignorable],
      ['forget', 's'],
    ]);
  });

  it('carries store appends and fsync batches as primitives, and rebuilds them equal', () => {
    const append: StoreOperation = { operation: 'append', system: 'steerlog.memory', collection: 's', startTime: 10.25, endTime: 11.5, events: 3, firstSeq: 7 };
    const failed: StoreOperation = { operation: 'append', system: 'postgresql', collection: 's', startTime: 12, endTime: 12.75, events: 1, firstSeq: 10, error: 'store-conflict' };
    const fsync: StoreOperation = { operation: 'fsync', system: 'steerlog.jsonl', collection: '', startTime: 13, endTime: 14, events: 9, appends: 4 };
    const records: unknown[] = [];
    for (const op of [append, failed, fsync]) pushOperation(records, op);
    // nothing for the clone to walk but primitives
    expect(records.every((v) => v === null || typeof v !== 'object')).toBe(true);
    expect(reading(records)).toEqual([
      ['op', append],
      ['op', failed],
      ['op', fsync],
    ]);
  });

  it('parses an event\'s data once, when it is first read', () => {
    const records: unknown[] = [];
    pushObserve(records, 's', event(1), '{"turn":1}');
    const got: LogEvent[] = [];
    readHandOver(structuredClone(records), { observe: (_s, e) => void got.push(e), follow() {}, forget() {}, storeOperation() {} });
    const [e] = got;
    expect(Object.keys(e!)).toEqual(['seq', 'id', 'time', 'type', 'hash']);
    const first = e!.data;
    expect(first).toEqual({ turn: 1 });
    expect(e!.data).toBe(first);
  });

  it('refuses a record of an unknown kind', () => {
    expect(() => readHandOver([9, 's'], { observe() {}, follow() {}, forget() {}, storeOperation() {} })).toThrow(/unknown log record 9/);
  });
});
