import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT_DATA_SCHEMAS, type EventType } from '../../domain/events.js';
import { fastEventData, isCommonMetadata } from '../../domain/fast-event-data.js';
import { EventMetadataSchema } from '../../domain/event-metadata.js';
import { findNonJsonPath } from '../../domain/json.js';
import { parseEvent } from '../../domain/parse-event.js';
import * as E from 'fp-ts/lib/Either.js';
import { mutateJson } from '../support/json-mutation.js';

/** One valid sample of every shape the fast path takes, and a few it leaves to zod. */
const samples: readonly { readonly type: EventType; readonly data: unknown }[] = [
  { type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'ordinary' } },
  { type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'ordinary', seedLength: 3, parentSession: 'p' } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'a', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 2, removedCount: 1, inserted: [] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 1, removedCount: 1, outcome: 'canceled', inserted: [{ id: 'b', role: 'user', content: [], source: { kind: 'plugin', plugin: 'x', form: 'f' } }] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'c', role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: 'AA==' }], source: { kind: 'user', rpcId: 'r' } }] } },
  { type: 'user/message', data: { id: 'a', role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'user', rpcId: 'r', clientTimeZone: 'UTC' } } },
  { type: 'user/message', data: { id: 'a', role: 'user', content: [], source: { kind: 'coordinator', extra: 1 } } },
  // a child's report and settlement account, and a coordinator's message: every key of the source a string
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'r', role: 'user', content: [{ type: 'text', text: 'done' }], source: { kind: 'subagent-report', form: 'relay', senderSessionId: 'child-1' } }] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, inserted: [{ id: 's', role: 'user', content: [], source: { kind: 'subagent-settled', form: 'notice', summary: 'ok', senderSessionId: 'c', childSession: 'c' } }] } },
  { type: 'user/message', data: { id: 'k', role: 'user', content: [], source: { kind: 'coordinator', note: 'n' } } },
  // declined by the fast path (a key that is not a string), accepted by zod as before
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'y', role: 'user', content: [], source: { kind: 'subagent-report', senderSessionId: 'c', epoch: 2 } }] } },
  // a Host's prompt: its source names the principal that sent it
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'h', role: 'user', content: [{ type: 'text', text: 'q' }], source: { kind: 'user', rpcId: 'r', clientTimeZone: 'UTC', actor: 'local' } }] } },
  { type: 'turn/start', data: { turn: 1 } },
  { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  { type: 'turn/end', data: { turn: 2, reason: { kind: 'aborted', reason: { kind: 'user' } } } },
  { type: 'step/start', data: { turn: 1, step: 1 } },
  { type: 'step/end', data: { turn: 1, step: 2 } },
  { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] } } },
  { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'reasoning', text: 'r' }] }, usage: { inputTokens: 1, outputTokens: 2 } } },
  {
    type: 'assistant/message',
    data: {
      turn: 2,
      step: 3,
      message: { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'tool-call', callId: 'c1', name: 'noop', arguments: '{}' }], source: { kind: 'model', provider: 'p', model: 'm' } },
      interrupted: true,
    },
  },
  { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'image', mediaType: 'image/png', data: 'AA==' }] } } },
  // why the model stopped, when recorded
  { type: 'assistant/message', data: { turn: 1, step: 2, message: { role: 'assistant', content: [{ type: 'text', text: 'cut' }] }, finishReason: 'max-tokens' } },
  { type: 'assistant/message', data: { turn: 1, step: 2, message: { role: 'assistant', content: [] }, usage: { inputTokens: 1, outputTokens: 2 }, finishReason: 'stop' } },
  { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text', text: 'echo: a' } } },
  { type: 'assistant/chunk', data: { step: 2, chunk: { text: '', type: 'reasoning' }, turn: 3 } },
  // declined by the fast path (a sealed sidecar), accepted by zod as before
  { type: 'assistant/chunk', data: { turn: 1, step: 1, chunk: { type: 'text', text: '' }, sealed: { alg: 'aes-256-gcm', keyId: 'k', iv: 'AAAAAAAAAAAAAAAA', ct: 'AA==', mac: 'AA==' } } },
  { type: 'tool/call', data: { turn: 1, step: 2, callId: 'c1', name: 'noop', arguments: '{"a":1}' } },
  { type: 'tool/result', data: { turn: 1, step: 2, message: { role: 'tool', callId: 'c1', content: [{ type: 'text', text: 'ok' }] } } },
  { type: 'tool/result', data: { turn: 1, step: 2, message: { role: 'tool', callId: 'c1', content: [], isError: true }, error: { name: 'E', code: 'X' } } },
  { type: 'tool/result', data: { turn: 1, step: 2, message: { role: 'tool', callId: 'c1', content: [] }, meta: { k: [1] } } },
];

const mutate = (value: unknown, path: readonly number[], replacement: unknown, mode: number): unknown => mutateJson(value, path, replacement, mode);

const edgeValue = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 4, arbitrary: fc.constantFrom(-0, 0, 1, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN, Number.POSITIVE_INFINITY, '', 'text', 'user', 'plugin', 'next-step', 'canceled', 'completed', undefined, null, [], {}) },
);

describe('fastEventData (the parse fast path) accepts only what the schemas accept, to the same value', () => {
  it('takes the common shapes, and leaves the unusual ones to zod', () => {
    for (const s of samples) {
      const fast = fastEventData(s.type, s.data);
      const zod = EVENT_DATA_SCHEMAS[s.type].safeParse(s.data);
      expect(zod.success).toBe(true);
      if (fast !== null) expect(fast).toEqual(zod.data);
    }
    expect(samples.filter((s) => fastEventData(s.type, s.data) !== null).length).toBe(23);
  });

  /** Every object and array inside `v` is frozen (in place, the checks freeze each one; nothing walks it again). */
  const deeplyFrozen = (v: unknown): boolean =>
    typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(deeplyFrozen));

  it('whatever it accepts after a random edit, zod accepts as an equal, lossless value (and it copies, never freezing the input)', () => {
    fc.assert(
      fc.property(fc.nat(samples.length - 1), fc.array(fc.nat(20), { maxLength: 4 }), edgeValue, fc.nat(100), (i, path, replacement, mode) => {
        const { type, data } = samples[i]!;
        const edited = mutate(structuredClone(data), path, replacement, mode);
        const fast = fastEventData(type, edited);
        const owned = edited === undefined ? undefined : structuredClone(edited);
        const inPlace = fastEventData(type, owned, { inPlace: true });
        expect(inPlace === null).toBe(fast === null);
        if (fast === null) return;
        expect(inPlace).toBe(owned);
        expect(inPlace).toEqual(fast);
        expect(deeplyFrozen(inPlace)).toBe(true);
        expect(findNonJsonPath(edited)).toBeNull();
        const zod = EVENT_DATA_SCHEMAS[type].safeParse(edited);
        expect(zod.success).toBe(true);
        expect(fast).toEqual(zod.data);
        expect(Object.isFrozen(fast)).toBe(true);
        if (typeof edited === 'object' && edited !== null) expect(Object.isFrozen(edited)).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('fastEventData in shared mode (a store\'s deep-frozen recorded data)', () => {
  /** Every object and array of `v` except those on `unfrozenPath` (a path of keys) frozen. */
  const frozenExcept = (v: unknown, unfrozenPath: readonly (string | number)[] | null): unknown => {
    const copy = structuredClone(v);
    const walk = (x: unknown, onPath: boolean, depth: number): void => {
      if (typeof x !== 'object' || x === null) return;
      for (const [k, child] of Object.entries(x)) walk(child, onPath && unfrozenPath !== null && unfrozenPath[depth] === (Array.isArray(x) ? Number(k) : k), depth + 1);
      if (!(onPath && unfrozenPath !== null && depth === unfrozenPath.length)) Object.freeze(x);
    };
    walk(copy, true, 0);
    return copy;
  };
  const pathsOf = (v: unknown, prefix: (string | number)[] = []): (string | number)[][] =>
    typeof v !== 'object' || v === null
      ? []
      : [prefix, ...Object.entries(v).flatMap(([k, c]) => pathsOf(c, [...prefix, Array.isArray(v) ? Number(k) : k]))];

  it('uses deep-frozen data as is, and declines (so the caller copies) when any object or array in it is not frozen', () => {
    let declined = 0;
    for (const s of samples) {
      const copied = fastEventData(s.type, s.data);
      if (copied === null) continue;
      const frozen = frozenExcept(s.data, null);
      expect(fastEventData(s.type, frozen, { shared: true })).toBe(frozen);
      for (const path of pathsOf(s.data)) {
        const partly = frozenExcept(s.data, path);
        expect(fastEventData(s.type, partly, { shared: true })).toBeNull();
        declined++;
      }
    }
    expect(declined).toBeGreaterThan(20);
  });

  it('parseEvent with shared gives an event equal to the copying parse, sharing only deep-frozen data', () => {
    for (const s of samples) {
      const raw = { seq: 1, id: '00000000-0000-4000-8000-000000000001', time: 5, type: s.type, data: frozenExcept(s.data, null) };
      const shared = parseEvent(raw, { shared: true });
      const copied = parseEvent(raw);
      expect(shared).toEqual(copied);
      const partly = { ...raw, data: frozenExcept(s.data, []) };
      const p = parseEvent(partly, { shared: true });
      expect(E.isRight(p) && p.right.data).not.toBe(partly.data);
      expect(E.isRight(p) && Object.isFrozen(p.right.data)).toBe(true);
    }
  });
});

describe('isCommonMetadata (the metadata fast path) accepts only what EventMetadataSchema accepts', () => {
  it('takes actor/correlationId/causationId strings, and leaves everything else to the schema', () => {
    expect(isCommonMetadata({ causationId: 'e1' })).toBe(true);
    expect(isCommonMetadata({ actor: 'a', correlationId: 'c', causationId: 'e' })).toBe(true);
    expect(isCommonMetadata({ tenant: 't' })).toBe(false);
    expect(isCommonMetadata({ causationId: '' })).toBe(false);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('actor', 'correlationId', 'causationId', 'tenant', '__proto__'), edgeValue), (m) => {
        if (isCommonMetadata(m)) expect(EventMetadataSchema.safeParse(m).success).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
