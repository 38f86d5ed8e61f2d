import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClientRequestSchema, fastClientRequest, fastPromptRequest, SessionPromptRequestSchema } from '../../host/schemas.js';

/** Equal as the schema's output: the same JSON text (so the same keys in the same order) and deep-equal. */
const expectSameOutput = (fast: unknown, schema: { success: boolean; data?: unknown }) => {
  expect(schema.success).toBe(true);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(schema.data));
  expect(fast).toEqual(schema.data);
};

const lone = fc.constantFrom('\ud800', '\udc00', 'a\udbffb');
const text = fc.oneof(fc.string({ maxLength: 30 }), fc.tuple(fc.string({ maxLength: 5 }), lone).map(([a, b]) => a + b));
const id = fc.oneof(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/), fc.constantFrom('', '-x', 'a/b', 'x'.repeat(129), 'a b'));
const textBlock = fc.record({ type: fc.constant('text'), text }, { requiredKeys: ['type', 'text'] });
const imageBlock = fc.record(
  {
    type: fc.constant('image'),
    mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/bmp'),
    data: fc.oneof(fc.base64String({ maxLength: 16 }), fc.constantFrom('!!', 'a=b')),
    name: fc.oneof(fc.string({ maxLength: 10 }), fc.constant('n'.repeat(257)), fc.integer()),
  },
  { requiredKeys: ['type', 'mediaType', 'data'] },
);
/** Any value of each field, valid or not (for the one field a case changes). */
const anyField = {
  sessionId: id,
  mode: fc.constantFrom('queue', 'steer', 'other'),
  content: fc.oneof(fc.array(fc.oneof(textBlock, imageBlock, fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
  clientTimeZone: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('z'.repeat(100), 'z'.repeat(101)), fc.boolean()),
  messageId: id,
  durable: fc.oneof(fc.boolean(), fc.constant('yes')),
  extra: fc.jsonValue({ maxDepth: 1 }),
};
/** Valid prompts only: the fast path must take these (else it would be a check that never runs). */
const validPayload = fc.record(
  {
    sessionId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/),
    mode: fc.constantFrom('queue', 'steer'),
    content: fc.array(fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 30 }) }), { maxLength: 3 }),
    clientTimeZone: fc.string({ maxLength: 20 }),
    messageId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/),
    durable: fc.boolean(),
  },
  { requiredKeys: ['sessionId', 'mode', 'content'] },
);
/**
 * Prompt payloads near the valid ones: a valid payload (with images among its blocks), then one field set to any value
 * (valid or not), one removed, or an extra key; keys in any order, as a client may send them.
 */
const payload = fc
  .tuple(
    validPayload,
    fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 3 }),
    fc.constantFrom(...(Object.keys(anyField) as (keyof typeof anyField)[])),
    fc.oneof(...Object.values(anyField)),
    fc.constantFrom('set', 'delete', 'images'),
  )
  .map(([p, blocks, key, value, change]) => {
    const o: Record<string, unknown> = { ...p };
    if (change === 'set') o[key] = value;
    else if (change === 'delete') delete o[key];
    else o['content'] = blocks;
    return o;
  })
  .chain((o) => fc.shuffledSubarray(Object.entries(o), { minLength: Object.keys(o).length }).map((entries) => Object.fromEntries(entries)));

describe('the hand-written request checks answer as the schemas do', () => {
  it('a prompt payload: the fast check takes only what the schema accepts, and answers what the schema returns', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const v = JSON.parse(JSON.stringify(p)) as unknown;
        const fast = fastPromptRequest(v);
        if (fast !== null) expectSameOutput(fast, SessionPromptRequestSchema.safeParse(v));
      }),
      { numRuns: 600 },
    );
    fc.assert(
      fc.property(validPayload, (p) => {
        const v = JSON.parse(JSON.stringify(p)) as unknown;
        const fast = fastPromptRequest(v);
        expect(fast).not.toBeNull();
        expectSameOutput(fast, SessionPromptRequestSchema.safeParse(v));
      }),
    );
  });

  it('an envelope: the same', () => {
    const envelope = fc
      .record(
        {
          type: fc.constantFrom('client-request', 'server-response'),
          rpcId: fc.oneof(fc.string({ maxLength: 10 }), text, fc.constant('r'.repeat(201)), fc.integer()),
          method: fc.oneof(fc.string({ maxLength: 12 }), fc.constant('m'.repeat(101))),
          payload: fc.jsonValue({ maxDepth: 2 }),
          other: fc.jsonValue({ maxDepth: 1 }),
        },
        { requiredKeys: [] },
      )
      .chain((o) => fc.shuffledSubarray(Object.entries(o), { minLength: Object.keys(o).length }).map((entries) => Object.fromEntries(entries)));
    fc.assert(
      fc.property(fc.oneof(envelope, fc.jsonValue({ maxDepth: 2 })), (e) => {
        const v = JSON.parse(JSON.stringify(e)) as unknown;
        const fast = fastClientRequest(v);
        if (fast !== null) expectSameOutput(fast, ClientRequestSchema.safeParse(v));
      }),
      { numRuns: 600 },
    );
    const valid = { type: 'client-request', rpcId: 'r1', method: 'session.prompt', payload: { a: [1] } };
    expect(fastClientRequest(JSON.parse(JSON.stringify(valid)))).toEqual(valid);
  });

  it('leaves to the schema what is not a plain JSON object', () => {
    expect(fastClientRequest(Object.assign(Object.create(null), { type: 'client-request', rpcId: 'r', method: 'm', payload: 1 }))).toBeNull();
    expect(fastPromptRequest(new Map())).toBeNull();
    expect(fastPromptRequest([])).toBeNull();
  });
});
