import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { EventParseError } from '../../domain/errors.js';
import { CHAIN_HASH_PATTERN, isChainHash } from '../../domain/event-chain.js';
import { EventMetadataSchema } from '../../domain/event-metadata.js';
import { EVENT_DATA_SCHEMAS, isEventType, type LogEvent } from '../../domain/events.js';
import { findNonJsonPath } from '../../domain/json.js';
import { parseEvent, type ParseEventOptions } from '../../domain/parse-event.js';
import { mutateJson } from '../support/json-mutation.js';

/**
 * parseEvent against an oracle written from the zod schemas (the source of truth for metadata and data) and the
 * envelope's rules in their order, with no fast path: over random valid events of the common shapes and the same
 * events mutated (wrong types, missing and extra fields, non-JSON numbers, wrong seq), in the copying, owned and
 * shared modes, parseEvent must accept exactly what the oracle accepts, to an equal deep-frozen event, and refuse
 * the rest with the same code, seq, type and path.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENVELOPE_KEYS = new Set(['seq', 'id', 'time', 'type', 'data', 'ignorable', 'metadata', 'hash']);
const zodPath = (issue: z.ZodIssue): string => issue.path.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), 'data');
type Verdict = { ok: true; event: unknown } | { ok: false; code: string; seq: number | null; type: string | null; path: string };

const oracle = (raw: unknown, expectedSeq: number | undefined): Verdict => {
  const position = expectedSeq ?? null;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, code: 'malformed-envelope', seq: position, type: null, path: '' };
  const env = raw as Record<string, unknown>;
  const seq = typeof env.seq === 'number' && Number.isSafeInteger(env.seq) && env.seq >= 0 ? env.seq : null;
  const type = typeof env.type === 'string' && env.type.length > 0 ? env.type : null;
  const no = (code: string, path: string): Verdict => ({ ok: false, code, seq: seq ?? position, type, path });
  if (seq === null) return no('malformed-envelope', 'seq');
  if (type === null) return no('malformed-envelope', 'type');
  if (typeof env.id !== 'string' || !UUID.test(env.id)) return no('malformed-envelope', 'id');
  if (typeof env.time !== 'number' || !Number.isFinite(env.time)) return no('malformed-envelope', 'time');
  if (!('data' in env)) return no('malformed-envelope', 'data');
  if (env.ignorable !== undefined && env.ignorable !== true) return no('malformed-envelope', 'ignorable');
  const extra = Object.keys(env).find((k) => !ENVELOPE_KEYS.has(k));
  if (extra !== undefined) return no('malformed-envelope', extra);
  if (env.metadata !== undefined) {
    if (typeof env.metadata !== 'object' || env.metadata === null || Array.isArray(env.metadata)) return no('malformed-envelope', 'metadata');
    const m = EventMetadataSchema.safeParse(env.metadata);
    if (!m.success) return no('malformed-envelope', ['metadata', ...m.error.issues[0]!.path].join('.'));
  }
  if (env.hash !== undefined && !(typeof env.hash === 'string' && CHAIN_HASH_PATTERN.test(env.hash))) return no('malformed-envelope', 'hash');
  if (expectedSeq !== undefined && seq !== expectedSeq) return no('seq-out-of-order', 'seq');
  const nonJson = findNonJsonPath(env.data);
  if (nonJson !== null) return no('invalid-event-data', nonJson.replace(/^\$/, 'data'));
  const trailer = { ...(env.ignorable === true ? { ignorable: true } : {}), ...(env.metadata !== undefined ? { metadata: env.metadata } : {}), ...(env.hash !== undefined ? { hash: env.hash } : {}) };
  if (!isEventType(type)) {
    if (env.ignorable === true) return { ok: true, event: { seq, id: env.id, time: env.time, type, data: env.data, ...trailer } };
    return no('unknown-event-type', 'type');
  }
  const result = EVENT_DATA_SCHEMAS[type].safeParse(env.data);
  if (!result.success) return no('invalid-event-data', zodPath(result.error.issues[0]!));
  return { ok: true, event: { seq, id: env.id, time: env.time, type, data: result.data, ...trailer } };
};

const deeplyFrozen = (v: unknown): boolean => typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(deeplyFrozen));
const deepFrozenCopy = <T>(v: T): T => {
  const c = structuredClone(v);
  const walk = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) return;
    Object.values(x).forEach(walk);
    Object.freeze(x);
  };
  walk(c);
  return c;
};

// valid data of the shapes a session log is mostly made of (the fast path's), and a few it leaves to zod
const id = fc.string({ minLength: 1, maxLength: 4 });
const text = fc.string({ maxLength: 4 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 4 });
const pos = fc.integer({ min: 1, max: 1000 });
const textBlock = fc.record({ type: fc.constant('text'), text });
const userSource = fc.oneof(
  fc.record({ kind: fc.constant('user'), rpcId: text, clientTimeZone: text, actor: text }, { requiredKeys: ['kind'] }),
  fc.record({ kind: fc.constant('plugin'), plugin: text, form: text }, { requiredKeys: ['kind', 'plugin'] }),
);
const userMessage = fc.record({ id, role: fc.constant('user'), content: fc.array(textBlock, { maxLength: 3 }), source: userSource });
const assistantBlock = fc.oneof(
  textBlock,
  fc.record({ type: fc.constant('reasoning'), text }),
  fc.record({ type: fc.constant('tool-call'), callId: id, name: id, arguments: text }),
);
const dataOf = fc.oneof(
  fc.record({ type: fc.constant('agent/inbox/spliced'), data: fc.record({ target: fc.constantFrom('next-turn', 'next-step'), start: fc.nat(50), inserted: fc.array(userMessage, { minLength: 1, maxLength: 3 }) }) }),
  fc.record({ type: fc.constant('agent/inbox/spliced'), data: fc.record({ target: fc.constantFrom('next-turn', 'next-step'), start: fc.nat(50), removedCount: pos, inserted: fc.constant([]) }) }),
  fc.record({ type: fc.constant('agent/inbox/spliced'), data: fc.record({ target: fc.constant('next-turn'), start: fc.nat(50), removedCount: pos, inserted: fc.array(userMessage, { maxLength: 2 }), outcome: fc.constant('canceled') }) }),
  fc.record({ type: fc.constant('user/message'), data: userMessage }),
  fc.record({ type: fc.constantFrom('turn/start'), data: fc.record({ turn: pos }) }),
  fc.record({ type: fc.constantFrom('step/start', 'step/end'), data: fc.record({ turn: pos, step: pos }) }),
  fc.record({ type: fc.constant('turn/end'), data: fc.record({ turn: pos, reason: fc.record({ kind: fc.constantFrom('completed', 'max-tokens', 'blocked', 'interrupted') }) }) }),
  fc.record({
    type: fc.constant('assistant/message'),
    data: fc.record(
      {
        turn: pos,
        step: pos,
        message: fc.record({ role: fc.constant('assistant'), content: fc.array(assistantBlock, { maxLength: 3 }), source: fc.record({ kind: fc.constant('model'), provider: text, model: text }) }, { requiredKeys: ['role', 'content'] }),
        usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
        interrupted: fc.constant(true),
      },
      { requiredKeys: ['turn', 'step', 'message'] },
    ),
  }),
  fc.record({ type: fc.constant('tool/call'), data: fc.record({ turn: pos, step: pos, callId: id, name: id, arguments: text }) }),
  fc.record({
    type: fc.constant('tool/result'),
    data: fc.record(
      { turn: pos, step: pos, message: fc.record({ role: fc.constant('tool'), callId: id, content: fc.array(textBlock, { maxLength: 2 }), isError: fc.boolean() }, { requiredKeys: ['role', 'callId', 'content'] }), error: fc.record({ name: text, code: text }) },
      { requiredKeys: ['turn', 'step', 'message'] },
    ),
  }),
  fc.record({ type: fc.constant('session/created'), data: fc.record({ sessionId: id, createdAt: fc.nat(), kind: fc.constantFrom('ordinary', 'continuable', 'one-shot') }) }),
  fc.record({ type: fc.constantFrom('x/unknown', 'constructor', '__proto__'), data: fc.jsonValue({ maxDepth: 2 }) }),
);
const metadata = fc.oneof(
  { weight: 3, arbitrary: fc.record({ actor: nonEmpty, actorKind: fc.constantFrom('user', 'plugin', 'system'), correlationId: nonEmpty, causationId: nonEmpty }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ actor: text, actorKind: fc.constantFrom('user', 'robot'), causationId: text }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('actor', 'causationId', 'tenant'), fc.oneof(text, fc.constant(1), fc.constant(null))) },
);
const event = fc.record(
  {
    seq: fc.nat(20),
    id: fc.oneof(fc.uuid(), fc.uuid().map((u) => u.toUpperCase())),
    time: fc.integer({ min: 0, max: 2e12 }),
    body: dataOf,
    metadata,
    hash: fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: 64, maxLength: 64 }).map((h) => h.join('')),
    ignorable: fc.constant(true),
  },
  { requiredKeys: ['seq', 'id', 'time', 'body'] },
).map(({ body, ...rest }) => ({ ...rest, type: body.type, data: body.data }) as Record<string, unknown>);

const mutate = (value: unknown, path: readonly number[], replacement: unknown, mode: number): unknown => mutateJson(value, path, replacement, mode);
const edgeValue = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(-0, 0, 1, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN, Number.POSITIVE_INFINITY, '', 'x', '-', 'user', 'plugin', 'next-step', 'canceled', 'completed', 'assistant', 'tool-call', 'ab'.repeat(32), 'AB'.repeat(32), '00000000-0000-4000-8000-00000000000-', undefined, null, true, false, [], {}),
  },
);

/** parseEvent's verdict in one mode, checked against the oracle's. */
const agrees = (want: Verdict, got: E.Either<EventParseError, LogEvent>): void => {
  if (want.ok) {
    if (E.isLeft(got)) throw new Error(`refused what the schemas accept: ${got.left.message}`);
    expect(got.right).toEqual(want.event);
    expect(deeplyFrozen(got.right)).toBe(true);
  } else {
    if (E.isRight(got)) throw new Error(`accepted what the schemas refuse (${want.code} at ${want.path})`);
    expect(got.left).toBeInstanceOf(EventParseError);
    expect({ code: got.left.code, seq: got.left.seq, type: got.left.eventType, path: got.left.path }).toEqual({ code: want.code, seq: want.seq, type: want.type, path: want.path });
  }
};
const checkAllModes = (raw: unknown, expectedSeq: number | undefined): Verdict => {
  const want = oracle(structuredClone(raw), expectedSeq);
  const options: ParseEventOptions = expectedSeq === undefined ? {} : { expectedSeq };
  agrees(want, parseEvent(raw, options));
  agrees(want, parseEvent(structuredClone(raw), { ...options, owned: true }));
  agrees(want, parseEvent(deepFrozenCopy(raw), { ...options, shared: true }));
  return want;
};

describe('parseEvent accepts and refuses exactly what the zod schemas (and the envelope rules) do', () => {
  it('random valid events: accepted in every mode, equal to what zod returns, deep-frozen', () => {
    let accepted = 0;
    fc.assert(
      fc.property(event, fc.boolean(), (raw, atSeq) => {
        if (checkAllModes(raw, atSeq ? (raw.seq as number) : undefined).ok) accepted++;
      }),
      { numRuns: 1000 },
    );
    expect(accepted).toBeGreaterThan(300);
  });

  it('mutated events (wrong types, missing and extra fields, in the envelope or the data; a wrong seq): the same verdict, code and path', () => {
    let refused = 0;
    fc.assert(
      fc.property(event, fc.array(fc.nat(20), { maxLength: 5 }), edgeValue, fc.nat(100), fc.option(fc.nat(20), { nil: undefined }), (raw, path, replacement, mode, expectedSeq) => {
        if (!checkAllModes(mutate(raw, path, replacement, mode), expectedSeq).ok) refused++;
      }),
      { numRuns: 3000 },
    );
    expect(refused).toBeGreaterThan(600);
  });

  it('isChainHash (a table of digits) answers as CHAIN_HASH_PATTERN does', () => {
    const hex = fc.array(fc.constantFrom(...'0123456789abcdef'), { minLength: 64, maxLength: 64 }).map((h) => h.join(''));
    const hashLike = fc.oneof(
      hex,
      fc.tuple(hex, fc.nat(63), fc.constantFrom('g', 'A', 'F', '-', ' ', '/', ':', '`', 'é', '\u0660', '')).map(([h, i, c]) => h.slice(0, i) + c + h.slice(i + 1)),
      fc.string({ maxLength: 70 }),
    );
    fc.assert(
      fc.property(hashLike, (s) => {
        expect(isChainHash(s)).toBe(CHAIN_HASH_PATTERN.test(s));
      }),
      { numRuns: 3000 },
    );
  });
});
