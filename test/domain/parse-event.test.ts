import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { isEventParseError, type EventParseError } from '../../domain/errors.js';
import { isUuid, parseEvent, parseLogLine } from '../../domain/parse-event.js';
import { uuidAt } from '../../testing/log-builder.js';

const env = (over: Record<string, unknown> = {}) => ({ seq: 3, id: uuidAt(4), time: 1_700_000_000_000, type: 'turn/start', data: { turn: 1 }, ...over });
const user = { id: 'A', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } };
const fails = (raw: unknown, opts = {}): EventParseError => {
  const r = parseEvent(raw, opts);
  if (E.isRight(r)) throw new Error(`expected ${JSON.stringify(raw)} to be refused`);
  expect(isEventParseError(r.left)).toBe(true);
  return r.left;
};

describe('parseEvent', () => {
  it('accepts a valid event and deep-freezes it', () => {
    const r = parseEvent(env());
    expect(E.isRight(r) && r.right).toEqual(env());
    expect(E.isRight(r) && Object.isFrozen(r.right.data)).toBe(true);
  });

  it.each([
    ['not an object', 42, 'malformed-envelope', ''],
    ['an array', [], 'malformed-envelope', ''],
    ['missing seq', { ...env(), seq: undefined }, 'malformed-envelope', 'seq'],
    ['negative seq', env({ seq: -1 }), 'malformed-envelope', 'seq'],
    ['fractional seq', env({ seq: 1.5 }), 'malformed-envelope', 'seq'],
    ['empty type', env({ type: '' }), 'malformed-envelope', 'type'],
    ['id not a uuid', env({ id: 'x' }), 'malformed-envelope', 'id'],
    ['time not a number', env({ time: '1' }), 'malformed-envelope', 'time'],
    ['missing data', { seq: 0, id: uuidAt(1), time: 1, type: 'turn/start' }, 'malformed-envelope', 'data'],
    ['ignorable false', env({ ignorable: false }), 'malformed-envelope', 'ignorable'],
    ['an extra envelope field', env({ extra: 1 }), 'malformed-envelope', 'extra'],
    ['an unknown type', env({ type: 'agent/teleported' }), 'unknown-event-type', 'type'],
    ['turn 0', env({ data: { turn: 0 } }), 'invalid-event-data', 'data.turn'],
    ['an extra data field', env({ data: { turn: 1, x: 1 } }), 'invalid-event-data', 'data'],
    ['an unknown turn end reason', env({ type: 'turn/end', data: { turn: 1, reason: { kind: 'vanished' } } }), 'invalid-event-data', 'data.reason.kind'],
    ['aborted without a cause', env({ type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted' } } }), 'invalid-event-data', 'data.reason.reason'],
    ['an error without code', env({ type: 'turn/end', data: { turn: 1, reason: { kind: 'error', error: { message: 'x' } } } }), 'invalid-event-data', 'data.reason.error.code'],
    ['a splice target', env({ type: 'agent/inbox/spliced', data: { target: 'later', start: 0, inserted: [user] } }), 'invalid-event-data', 'data.target'],
    ['a no-op splice', env({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [] } }), 'invalid-event-data', 'data.inserted'],
    ['outcome without removal', env({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [user], outcome: 'canceled' } }), 'invalid-event-data', 'data.outcome'],
    ['a claim that inserts', env({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [user] } }), 'invalid-event-data', 'data.inserted'],
    ['removedCount 0', env({ type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 0, inserted: [user] } }), 'invalid-event-data', 'data.removedCount'],
    ['a message without source', env({ type: 'user/message', data: { ...user, source: undefined } }), 'invalid-event-data', 'data.source'],
    ['a plugin source without plugin', env({ type: 'user/message', data: { ...user, source: { kind: 'plugin' } } }), 'invalid-event-data', 'data.source.plugin'],
    ['a bad content block', env({ type: 'user/message', data: { ...user, content: [{ type: 'video' }] } }), 'invalid-event-data', 'data.content[0].type'],
    ['non-JSON data', env({ data: { turn: Number.NaN } }), 'invalid-event-data', 'data.turn'],
    ['a bad session kind', env({ seq: 0, type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'weird' } }), 'invalid-event-data', 'data.kind'],
  ])('refuses %s', (_, raw, code, path) => {
    const e = fails(raw);
    expect(e.code).toBe(code);
    expect(e.path).toBe(path);
  });

  it('names the seq and the event type in the message', () => {
    const e = fails(env({ data: { turn: -2 } }));
    expect(e.seq).toBe(3);
    expect(e.eventType).toBe('turn/start');
    expect(e.message).toMatch(/^seq 3 \(turn\/start\): .* at data\.turn$/);
  });

  it('keeps unknown types marked ignorable, verbatim', () => {
    const r = parseEvent(env({ type: 'plugin/telemetry', data: { anything: [1, 'x'] }, ignorable: true }));
    expect(E.isRight(r) && r.right).toMatchObject({ type: 'plugin/telemetry', data: { anything: [1, 'x'] }, ignorable: true });
  });

  it('checks the expected seq', () => {
    expect(fails(env(), { expectedSeq: 2 }).code).toBe('seq-out-of-order');
  });

  it('parseLogLine refuses text that is not JSON', () => {
    const r = parseLogLine('{"seq": 0,', { expectedSeq: 0 });
    expect(E.isLeft(r) && r.left.code).toBe('invalid-json');
    expect(E.isLeft(r) && r.left.seq).toBe(0);
  });

  it('accepts every declared turn end reason', () => {
    for (const reason of [
      { kind: 'completed' },
      { kind: 'max-tokens' },
      { kind: 'blocked' },
      { kind: 'interrupted' },
      { kind: 'aborted', reason: { kind: 'user' } },
      { kind: 'aborted', reason: { kind: 'parent' } },
      { kind: 'aborted', reason: { kind: 'hook', reason: 'policy' } },
      { kind: 'aborted', reason: { kind: 'disposed' } },
      { kind: 'aborted', reason: { kind: 'legacy' } },
      { kind: 'error', error: { message: 'boom', code: 'UNKNOWN', status: 500, providerRetryAfterMs: 10, requestId: 'r' } },
    ]) {
      expect(E.isRight(parseEvent(env({ type: 'turn/end', data: { turn: 1, reason } })))).toBe(true);
    }
  });
});

describe('metadata and hash in the envelope', () => {
  it('are kept on every path (the hand-checked common shapes and zod), frozen; a bad hash or metadata is a malformed envelope', async () => {
    const { parseEvent: parse } = await import('../../domain/parse-event.js');
    const E2 = await import('fp-ts/lib/Either.js');
    const hash = 'ab'.repeat(32);
    const metadata = { actor: 'user:ana', extra: { n: 1 } };
    const base = { seq: 0, id: '00000000-0000-4000-8000-000000000001', time: 1, metadata, hash };
    for (const raw of [
      { ...base, type: 'turn/start', data: { turn: 1 } },
      { ...base, type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'ordinary' } },
      { ...base, type: 'x/unknown', data: {}, ignorable: true },
    ]) {
      const parsed = parse(raw);
      if (E2.isLeft(parsed)) throw parsed.left;
      expect(parsed.right.metadata).toEqual(metadata);
      expect(parsed.right.hash).toBe(hash);
      expect(Object.isFrozen(parsed.right.metadata)).toBe(true);
    }
    const bad = (over: object) => parse({ ...base, type: 'turn/start', data: { turn: 1 }, ...over });
    expect(E2.isLeft(bad({ hash: 'XY' })) && (bad({ hash: 'XY' }) as { left: { code: string } }).left.code).toBe('malformed-envelope');
    expect(E2.isLeft(bad({ metadata: [1] }))).toBe(true);
    expect(E2.isLeft(bad({ metadata: { actor: '' } }))).toBe(true);
  });
});

describe('the envelope checks by hand', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const uuidLike = fc.oneof(
    fc.uuid(),
    fc.uuid().map((u) => u.toUpperCase()),
    fc.tuple(fc.uuid(), fc.nat(35), fc.constantFrom('g', 'G', '-', ' ', '0', 'é', '')).map(([u, i, c]) => u.slice(0, i) + c + u.slice(i + 1)),
    fc.string({ maxLength: 40 }),
  );

  it('isUuid answers as the UUID pattern does', () => {
    fc.assert(
      fc.property(uuidLike, (s) => {
        expect(isUuid(s)).toBe(UUID.test(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('owned, shared and copying parses agree on every envelope: verdict, error and event (ids, extra keys, metadata)', () => {
    const metadata = fc.option(fc.dictionary(fc.constantFrom('actor', 'correlationId', 'causationId', 'tenant'), fc.oneof(fc.string({ maxLength: 3 }), fc.constant(1), fc.constant(null))), { nil: undefined });
    fc.assert(
      fc.property(uuidLike, metadata, fc.option(fc.constantFrom('extra', 'hash', 'ignorable'), { nil: undefined }), (id, meta, extra) => {
        const raw: Record<string, unknown> = { seq: 0, id, time: 1, type: 'turn/start', data: { turn: 1 } };
        if (meta !== undefined) raw.metadata = meta;
        if (extra === 'extra') raw.extra = 1;
        if (extra === 'hash') raw.hash = 'ab'.repeat(32);
        if (extra === 'ignorable') raw.ignorable = true;
        const copying = parseEvent(raw);
        const owned = parseEvent(structuredClone(raw), { owned: true });
        const frozen = structuredClone(raw);
        if (frozen.metadata) Object.freeze(frozen.metadata);
        Object.freeze(frozen.data);
        const shared = parseEvent(frozen, { shared: true });
        for (const other of [owned, shared]) {
          expect(E.isRight(other)).toBe(E.isRight(copying));
          if (E.isRight(copying) && E.isRight(other)) {
            expect(other.right).toEqual(copying.right);
            if (other.right.metadata !== undefined) expect(Object.isFrozen(other.right.metadata)).toBe(true);
          }
          if (E.isLeft(copying) && E.isLeft(other)) expect(other.left.message).toBe(copying.left.message);
        }
        if (E.isRight(copying)) {
          expect(UUID.test(id)).toBe(true);
          if (raw.metadata !== undefined) expect(copying.right.metadata).not.toBe(raw.metadata); // copied: the caller may change its own
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('shared, deep-frozen data of a shape the fast path does not take is checked in place by the compiled predicate: used as is, never changed', () => {
    const header = (tools: unknown): Record<string, unknown> => ({ seq: 0, id: '3f0e1c2a-1b2c-4d3e-8f40-5a6b7c8d9e0f', time: 1, type: 'request/header', data: { header: { config: { provider: 'scripted', model: 'scripted-1' }, tools }, reason: 'initial' } });
    const deepFreeze = <T>(v: T): T => {
      if (typeof v === 'object' && v !== null) {
        for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
        Object.freeze(v);
      }
      return v;
    };
    const frozen = header([{ name: 'read_file' }, { name: 'run_check' }]);
    deepFreeze(frozen.data);
    const copying = parseEvent(structuredClone(frozen));
    const shared = parseEvent(frozen, { shared: true });
    expect(E.isRight(copying) && E.isRight(shared)).toBe(true);
    if (E.isRight(shared) && E.isRight(copying)) {
      expect(shared.right.data).toBe(frozen.data); // not copied
      expect(shared.right).toEqual(copying.right);
    }
    // one part not frozen: copied through the schema, and the caller's value is left as it was (nothing frozen)
    const partly = header([{ name: 'read_file' }, { name: 'run_check' }]);
    const tools = (partly.data as { header: { tools: object[] } }).header.tools;
    Object.freeze(partly.data);
    Object.freeze((partly.data as { header: object }).header);
    const p = parseEvent(partly, { shared: true });
    expect(E.isRight(p)).toBe(true);
    if (E.isRight(p)) expect(p.right.data).not.toBe(partly.data);
    expect(Object.isFrozen(tools)).toBe(false);
    expect(Object.isFrozen(tools[0])).toBe(false);
    // refused as the schema refuses it
    const bad = header([{ name: 7 }]);
    deepFreeze(bad.data);
    const refusedShared = parseEvent(bad, { shared: true });
    const refusedCopying = parseEvent(structuredClone(bad));
    expect(E.isLeft(refusedShared) && E.isLeft(refusedCopying)).toBe(true);
    if (E.isLeft(refusedShared) && E.isLeft(refusedCopying)) expect(refusedShared.left.message).toBe(refusedCopying.left.message);
  });
});
