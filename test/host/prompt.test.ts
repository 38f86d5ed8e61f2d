import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../domain/message.js';
import { createUserMessage } from '../../domain/message.js';
import { promptMessage, sameContent, toContentBlocks } from '../../host/prompt.js';
import { PromptContentBlockSchema } from '../../host/schemas.js';

// sameContent decides whether a prompt retried under an admitted id is the same prompt (else: idempotency-conflict).
// Its answer is that of comparing the two contents' JSON texts: pinned here on contents as the host builds them.

/** A prompt's blocks as a client sends them, parsed by the request schema, then kept as the host keeps them. */
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string({ unit: 'grapheme', maxLength: 8 }) }),
  fc.record({ type: fc.constant('image'), mediaType: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String({ maxLength: 12 }), name: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }) }, { requiredKeys: ['type', 'mediaType', 'data'] }),
);
const content = fc.array(block, { maxLength: 4 }).map((raw) => toContentBlocks(raw.map((b) => PromptContentBlockSchema.parse(JSON.parse(JSON.stringify(b))))));

/** The same content as the log gives it back: a JSON copy, sometimes with the keys of one block in another order. */
const asLogged = (c: readonly ContentBlock[], reorderAt: number | null): ContentBlock[] =>
  (JSON.parse(JSON.stringify(c)) as ContentBlock[]).map((b, i) => (i === reorderAt ? (Object.fromEntries(Object.entries(b).reverse()) as ContentBlock) : b));

describe('sameContent', () => {
  it('answers what comparing the JSON texts answers: equal copies, reordered keys, other contents', () => {
    fc.assert(
      fc.property(content, content, fc.option(fc.nat(3), { nil: null }), fc.boolean(), (a, other, reorderAt, related) => {
        const b = related ? asLogged(a, reorderAt) : other;
        expect(sameContent(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('a retry with the same blocks is the same prompt; another text, image, block count or key order is not', () => {
    const text: ContentBlock = { type: 'text', text: 'hello' };
    const image: ContentBlock = { type: 'image', mediaType: 'image/png', data: 'AAAA' };
    expect(sameContent([text, image], [{ ...text }, { ...image }])).toBe(true);
    expect(sameContent([], [])).toBe(true);
    expect(sameContent([text], [{ type: 'text', text: 'hello!' }])).toBe(false);
    expect(sameContent([image], [{ ...image, data: 'AAAB' }])).toBe(false);
    expect(sameContent([text], [text, text])).toBe(false);
    expect(sameContent([text, image], [image, text])).toBe(false);
    // the key order counts, as it does in the JSON text
    expect(sameContent([text], [{ text: 'hello', type: 'text' } as ContentBlock])).toBe(false);
    // the image's client-side name is not kept, so it does not tell two prompts apart
    const [named] = toContentBlocks([PromptContentBlockSchema.parse({ type: 'image', mediaType: 'image/png', data: 'AAAA', name: 'a.png' })]);
    expect(sameContent([named!], [image])).toBe(true);
  });
});

/** Whether every object in `v` is frozen. */
const deepFrozen = (v: unknown): boolean =>
  typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(deepFrozen));

describe('promptMessage', () => {
  const source = fc.record(
    { kind: fc.constant('user'), rpcId: fc.string({ maxLength: 6 }), clientTimeZone: fc.constantFrom('UTC', 'Europe/Paris'), actor: fc.string({ maxLength: 6 }) },
    { requiredKeys: ['kind', 'rpcId', 'actor'] },
  );
  it('is the message createUserMessage makes (same JSON text, key order included), deep-frozen and detached', () => {
    fc.assert(
      fc.property(content, source, fc.option(fc.nat(3), { nil: null }), (c, s, reorderAt) => {
        // blocks as the host builds them, or one with its keys in another order (copied through structuredClone, which keeps it)
        const given = reorderAt === null ? c : asLogged(c, reorderAt);
        const m = promptMessage('m-1', given, s);
        expect(JSON.stringify(m)).toBe(JSON.stringify(createUserMessage(given, s, { newId: () => 'm-1' })));
        expect(deepFrozen(m)).toBe(true);
        expect(m.content).not.toBe(given);
        given.forEach((b, i) => expect(m.content[i]).not.toBe(b));
        expect(m.source).not.toBe(s);
      }),
      { numRuns: 500 },
    );
  });
  it('copies a source or a block of other shapes as createUserMessage does (nested values detached too)', () => {
    const nested = { kind: 'plugin', plugin: 'p', extra: { depth: [1, 2] } } as const;
    const m = promptMessage('m-2', [{ type: 'text', text: 'hi' }], nested as never);
    expect(JSON.stringify(m)).toBe(JSON.stringify(createUserMessage([{ type: 'text', text: 'hi' }], nested as never, { newId: () => 'm-2' })));
    expect((m.source as unknown as typeof nested).extra).not.toBe(nested.extra);
    expect(deepFrozen(m)).toBe(true);
  });
});
