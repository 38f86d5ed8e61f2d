import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACTOR_KINDS } from '../../../domain/event-metadata.js';
import { EVENT_TYPES, type LogEvent } from '../../../domain/events.js';
import { HandOverWriter, pushFollow, pushForget, pushObserve, pushOperation, readHandOver, type HandOver, type LogRecordSink } from '../../../adapters/telemetry/log-handover.js';
import { deriveSpans } from '../../../projections/telemetry/derive-spans.js';
import { SpanSourceField, spanSourceFields } from '../../../projections/telemetry/span-source.js';
import type { StoreOperation } from '../../../runtime/ports/store-operations.js';
import { ADVERSARIAL_SHAPES, adversarialLog } from '../../../bench/support/adversarial-logs.js';
import { logArb } from '../../projections/support/random-log.js';
import { toolSessionArb } from '../../projections/support/tool-session-log.js';

/**
 * The export worker's hand-over: records pushed on the runtime's thread, cloned to the worker, read back in order —
 * each event as what the span derivation reads of it (`span-source.ts`), so that the worker's spans are those of the
 * whole events.
 */

const event = (seq: number, extra: Partial<LogEvent> = {}): LogEvent =>
  Object.freeze({ seq, id: `e-${seq}`, time: 1_700_000_000_000 + seq, type: 'turn/start', data: { turn: seq, note: 'quote " and \u2028 and ü' }, hash: `h${seq}`, ...extra }) as unknown as LogEvent;

const reading = (handOver: HandOver) => {
  const got: unknown[] = [];
  const sink: LogRecordSink = {
    // the event's own fields as handed over, its data a getter that parses the JSON on the first read
    observe: (s, e) => void got.push(['observe', s, { ...e, ...(dataHanded(e) ? { data: e.data } : {}) }]),
    follow: (s, h) => void got.push(['follow', s, h]),
    forget: (s) => void got.push(['forget', s]),
    storeOperation: (op) => void got.push(['op', op]),
  };
  readHandOver(posted(handOver), sink);
  return got;
};
/** A hand-over as the worker gets it: cloned, its numbers' buffer transferred (the sender's copy detached). */
const posted = (h: HandOver): HandOver => {
  const got = structuredClone(h, { transfer: [h.numbers.buffer as ArrayBuffer] });
  expect(h.numbers.length).toBe(0);
  return got;
};
/** Was the event's data handed over (reading it does not throw)? */
const dataHanded = (e: LogEvent): boolean => {
  try {
    void e.data;
    return true;
  } catch {
    return false;
  }
};

/** The events of a log as the worker rebuilds them from the hand-over (through a structured clone, as posted). */
const handedOver = (events: readonly LogEvent[], sessionId = 's'): LogEvent[] => {
  const records = new HandOverWriter();
  // half the events with the data JSON the runtime made, half serialized on the way
  for (const e of events) pushObserve(records, sessionId, e, e.seq % 2 === 0 ? JSON.stringify(e.data) : undefined);
  const got: LogEvent[] = [];
  readHandOver(posted(records.take()), { observe: (_s, e) => void got.push(e), follow() {}, forget() {}, storeOperation() {} });
  return got;
};

/**
 * The events with what the generators leave out: a chain hash on every event, and on most of them metadata with an
 * actor (and an id the derivation never reads), so that a hand-over that dropped a hash or metadata the derivation
 * needs would change the spans (`steerlog.chain.head`, `steerlog.actor`).
 */
const dressed = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e, i) => ({
    ...e,
    hash: `h-${e.seq}-${i}`,
    ...(i % 4 === 3 ? {} : { metadata: { actor: `actor-${i % 7}`, actorKind: ACTOR_KINDS[i % ACTOR_KINDS.length]!, causationId: `c-${i}` } }),
  })) as LogEvent[];

/** The live export's derivation (trusted, no content hook) of the handed-over events against that of the events. */
const expectHandedSpansEqual = (events: readonly LogEvent[]): void => {
  const whole = deriveSpans(events, { validate: false });
  const handed = deriveSpans(handedOver(events), { validate: false });
  expect(handed.error).toBeNull();
  expect(handed.sessionId).toBe(whole.sessionId);
  expect(handed.spans).toEqual(whole.spans);
};

const example = (name: string): LogEvent[] =>
  readFileSync(new URL(`../../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogEvent);

describe('the log hand-over to the export worker', () => {
  it('carries each event as what the span derivation reads of it, and the other records equal, in order', () => {
    const start = event(1); // data only
    const end = event(2, { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } }, metadata: { causationId: 'c' } } as never); // data and hash
    const splice = event(3, { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [] }, metadata: { actor: 'u', actorKind: 'user' } } as never); // data, metadata
    const stepEnd = event(4, { type: 'step/end', data: { turn: 1, step: 1 }, metadata: { causationId: 'c' } } as never); // nothing of its own
    const userMessage = event(5, { type: 'user/message', data: { id: 'm', role: 'user', content: [{ type: 'text', text: 'secret' }], source: { kind: 'user' } } } as never);
    const unknown = Object.freeze({ seq: 6, id: 'e-6', time: 6, type: 'x/unknown', data: [1, 'two'], ignorable: true }) as unknown as LogEvent;
    const op: StoreOperation = { operation: 'projection-batch', system: 'postgresql', collection: 'p', startTime: 1.5, endTime: 2.25, events: 3, position: 12n, headPosition: 2n ** 70n };
    const records = new HandOverWriter();
    pushFollow(records, 's', [event(0)]);
    pushObserve(records, 's', start, JSON.stringify(start.data));
    pushObserve(records, 's', end, undefined); // no data JSON known: serialized on the way
    pushObserve(records, 's', splice, JSON.stringify(splice.data));
    pushObserve(records, 's', stepEnd, JSON.stringify(stepEnd.data));
    pushObserve(records, 's', userMessage, JSON.stringify(userMessage.data));
    pushOperation(records, op);
    pushObserve(records, 't', unknown, JSON.stringify(unknown.data));
    pushForget(records, 's');
    expect(records.size).toBe(3 + 6 + 7 + 7 + 5 + 5 + 2 + 5 + 2); // as many values as a flat array of them
    const handOver = records.take();
    expect(records.size).toBe(0);
    // no event id, no other event's hash or metadata, no data the derivation does not read: a step/end, a user
    // message (without a content hook) and an unknown event are their envelope's seq, time and type only
    for (const e of [start, end, splice, stepEnd, userMessage, unknown]) expect(handOver.text).not.toContain(e.id);
    for (const hash of ['h1', 'h3', 'h4', 'h5', 'h6']) expect(handOver.text).not.toContain(hash);
    expect(handOver.text).toContain('h2');
    expect(handOver.text).not.toContain('secret');
    expect(handOver.objects.filter((v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !('operation' in v))).toEqual([{ actor: 'u', actorKind: 'user' }]);
    expect([...handOver.numbers.subarray(0, handOver.length)]).toContain(EVENT_TYPES.indexOf('step/end'));
    expect(reading(handOver)).toEqual([
      ['follow', 's', [event(0)]],
      ['observe', 's', { seq: 1, time: start.time, type: 'turn/start', data: start.data }],
      ['observe', 's', { seq: 2, time: end.time, type: 'turn/end', data: end.data, hash: 'h2' }],
      ['observe', 's', { seq: 3, time: splice.time, type: 'agent/inbox/spliced', data: splice.data, metadata: { actor: 'u', actorKind: 'user' } }],
      ['observe', 's', { seq: 4, time: stepEnd.time, type: 'step/end' }],
      ['observe', 's', { seq: 5, time: userMessage.time, type: 'user/message' }],
      ['op', op],
      ['observe', 't', { seq: 6, time: 6, type: 'x/unknown' }],
      ['forget', 's'],
    ]);
  });

  it('carries store appends and fsync batches as primitives, and rebuilds them equal', () => {
    const append: StoreOperation = { operation: 'append', system: 'steerlog.memory', collection: 's', startTime: 10.25, endTime: 11.5, events: 3, firstSeq: 7 };
    const failed: StoreOperation = { operation: 'append', system: 'postgresql', collection: 's', startTime: 12, endTime: 12.75, events: 1, firstSeq: 10, error: 'store-conflict' };
    const fsync: StoreOperation = { operation: 'fsync', system: 'steerlog.jsonl', collection: '', startTime: 13, endTime: 14, events: 9, appends: 4 };
    const records = new HandOverWriter();
    for (const op of [append, failed, fsync]) pushOperation(records, op);
    const handOver = records.take();
    // nothing for the clone to walk but numbers and one string
    expect(handOver.objects).toEqual([]);
    expect(reading(handOver)).toEqual([
      ['op', append],
      ['op', failed],
      ['op', fsync],
    ]);
  });

  it("parses an event's data once, when it is first read", () => {
    const records = new HandOverWriter();
    pushObserve(records, 's', event(1), '{"turn":1}');
    const got: LogEvent[] = [];
    readHandOver(posted(records.take()), { observe: (_s, e) => void got.push(e), follow() {}, forget() {}, storeOperation() {} });
    const [e] = got;
    expect(Object.keys(e!)).toEqual(['seq', 'time', 'type']);
    const first = e!.data;
    expect(first).toEqual({ turn: 1 });
    expect(e!.data).toBe(first);
  });

  it('refuses to read what it was not handed: an event id, the data of a type whose data the derivation does not read', () => {
    const [stepEnd] = handedOver([event(4, { type: 'step/end', data: { turn: 1, step: 1 } } as never)]);
    expect(() => stepEnd!.id).toThrow(/reads no event id/);
    expect(() => stepEnd!.data).toThrow(/data of a step\/end was read/);
  });

  it('refuses a record of an unknown kind', () => {
    expect(() => readHandOver({ numbers: Float64Array.of(9, 1), length: 2, text: 's', objects: [] }, { observe() {}, follow() {}, forget() {}, storeOperation() {} })).toThrow(/unknown log record 9/);
  });
});

/** Any string, lone surrogates and NUL included: the text channel cuts strings by length, never by a separator. */
const anyString = fc.string({ unit: fc.oneof(fc.constantFrom('\u0000', '\ud800', '\udfff', 'ü', '😀', '"'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 12 });
const typeArb = fc.oneof(fc.constantFrom(...EVENT_TYPES), anyString);
/** A record as written, and what the worker's sink must get for it. */
const recordArb = fc.oneof(
  fc
    .record({
      sessionId: anyString,
      seq: fc.nat(),
      time: fc.double({ noNaN: true }),
      type: typeArb,
      data: fc.jsonValue(),
      metadata: fc.option(fc.dictionary(anyString, anyString, { maxKeys: 3, noNullPrototype: true }), { nil: undefined }),
      hash: fc.option(anyString, { nil: undefined }),
      dataJson: fc.boolean(),
    })
    .map((r) => {
      const e = { seq: r.seq, id: 'never-read', time: r.time, type: r.type, data: r.data, ...(r.metadata ? { metadata: r.metadata } : {}), ...(r.hash !== undefined ? { hash: r.hash } : {}) } as unknown as LogEvent;
      const fields = spanSourceFields(r.type, false);
      const seen = {
        seq: r.seq,
        time: r.time,
        type: r.type,
        ...((fields & SpanSourceField.Data) !== 0 ? { data: JSON.parse(JSON.stringify(r.data)) as unknown } : {}),
        ...((fields & SpanSourceField.Metadata) !== 0 && r.metadata ? { metadata: r.metadata } : {}),
        ...((fields & SpanSourceField.Hash) !== 0 && r.hash !== undefined ? { hash: r.hash } : {}),
      };
      return { write: (w: HandOverWriter) => pushObserve(w, r.sessionId, e, r.dataJson ? JSON.stringify(r.data) : undefined), expected: ['observe', r.sessionId, seen] as unknown[] };
    }),
  fc
    .record({
      operation: fc.constantFrom('append', 'fsync') as fc.Arbitrary<'append' | 'fsync'>,
      system: anyString,
      collection: anyString,
      startTime: fc.double({ noNaN: true }),
      endTime: fc.double({ noNaN: true }),
      events: fc.nat(),
      appends: fc.option(fc.nat(), { nil: undefined }),
      firstSeq: fc.option(fc.nat(), { nil: undefined }),
      error: fc.option(anyString, { nil: undefined }),
    })
    .map((r) => {
      const op = Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as StoreOperation;
      return { write: (w: HandOverWriter) => pushOperation(w, op), expected: ['op', op] as unknown[] };
    }),
  fc.record({ sessionId: anyString, seqs: fc.array(fc.nat(), { maxLength: 3 }) }).map((r) => {
    const history = r.seqs.map((seq) => event(seq));
    return { write: (w: HandOverWriter) => pushFollow(w, r.sessionId, history), expected: ['follow', r.sessionId, history] as unknown[] };
  }),
  anyString.map((sessionId) => ({ write: (w: HandOverWriter) => pushForget(w, sessionId), expected: ['forget', sessionId] as unknown[] })),
);

describe('the hand-over carries every record exactly, whatever its strings and numbers', () => {
  it('over random records, in hand-overs cut anywhere (some past the initial buffer: it grows)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(recordArb, fc.nat(40)), { maxLength: 700 }), (records) => {
        const w = new HandOverWriter();
        const got: unknown[] = [];
        for (const [r, cut] of records) {
          r.write(w);
          if (cut === 0) {
            got.push(...reading(w.take()));
          }
        }
        got.push(...reading(w.take()));
        // times and sizes exactly (-0 stays -0; an absent optional number is absent, not NaN)
        expect(got).toStrictEqual(records.map(([r]) => r.expected));
      }),
      { numRuns: 150 },
    );
  });

  it("keeps each followed session's id from one hand-over to the next, until the session is forgotten", () => {
    const sessionIds = new Map<string, string>();
    const got: string[] = [];
    const sink: LogRecordSink = { observe: (s) => void got.push(s), follow: (s) => void got.push(s), forget: (s) => void got.push(s), storeOperation() {} };
    const id = 'a5c0e1f2-3b4d-4e6f-8a9b-0c1d2e3f4a5b';
    const w = new HandOverWriter();
    pushFollow(w, id, [event(0)]);
    readHandOver(posted(w.take()), sink, sessionIds);
    pushObserve(w, id, event(1), undefined);
    pushObserve(w, 'other', event(0, { type: 'step/end' } as never), undefined);
    readHandOver(posted(w.take()), sink, sessionIds);
    expect([...sessionIds.keys()]).toEqual([id, 'other']);
    pushForget(w, id);
    readHandOver(posted(w.take()), sink, sessionIds);
    expect([...sessionIds.keys()]).toEqual(['other']);
    expect(got).toEqual([id, id, 'other', id]);
  });

  it('refuses a hand-over whose text or objects it did not read to the end (a string or an object lost its place)', () => {
    const w = new HandOverWriter();
    pushForget(w, 's');
    const h = w.take();
    const sink = { observe() {}, follow() {}, forget() {}, storeOperation() {} };
    expect(() => readHandOver({ ...h, text: 'st' }, sink)).toThrow(/read 1 of 2 characters/);
    expect(() => readHandOver({ ...h, objects: [{}] }, sink)).toThrow(/0 of 1 objects/);
  });
});

describe('the spans of the handed-over events equal the spans of the events (nothing the derivation reads is left behind)', () => {
  it.each(['queue-steer-context', 'inbox-edits', 'blocked-and-dropped'])('over docs/examples/%s.jsonl, with hashes and actors', (name) => {
    const events = dressed(example(name));
    const spans = deriveSpans(events, { validate: false }).spans;
    // the hash and the actors show in the spans: a hand-over without them would differ
    expect(spans.some((s) => s.attributes['steerlog.chain.head'] !== undefined)).toBe(true);
    expect(spans.some((s) => s.events.some((ev) => ev.attributes['steerlog.actor'] !== undefined))).toBe(true);
    expectHandedSpansEqual(events);
  });

  it('over random inbox histories (follow-ups, steers, edits, removals, clears, turns)', () => {
    fc.assert(
      fc.property(logArb(), ({ events }) => expectHandedSpansEqual(dressed(events))),
      { numRuns: 100 },
    );
  });

  it('over random sessions with model calls, retries and tools', () => {
    fc.assert(
      fc.property(toolSessionArb(), ({ events }) => expectHandedSpansEqual(dressed(events))),
      { numRuns: 60 },
    );
  });

  it.each(ADVERSARIAL_SHAPES)('over the adversarial log "%s" (children, forks, claims outside turns, long turns…)', (shape) => {
    expectHandedSpansEqual(dressed([...adversarialLog(shape, 2_000, 200)] as unknown as LogEvent[]));
  });
});
