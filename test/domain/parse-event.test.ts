import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { isEventParseError, type EventParseError } from '../../domain/errors.js';
import { parseEvent, parseLogLine } from '../../domain/parse-event.js';
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
