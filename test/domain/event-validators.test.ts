import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { compileSchemas, schemaRefinements } from '../../domain/compiled-schema.js';
import { EVENT_VALIDATORS, compiledEventValidator } from '../../domain/event-validators.js';
import { EVENT_DATA_SCHEMAS, EVENT_TYPES, type EventType } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import { renderEventValidators } from '../../scripts/event-validators-source.js';
import { mutateJson } from '../support/json-mutation.js';

/** Valid data of the event types a log is mostly made of, and of some rarer shapes (refinements, passthrough, records). */
const samples: readonly { readonly type: EventType; readonly data: unknown }[] = [
  { type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'ordinary' } },
  { type: 'session/created', data: { sessionId: 's', createdAt: 1, kind: 'continuable', seedLength: 3, parentSession: 'p', origin: 'fork', delegationDepth: 2 } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'a', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 2, removedCount: 1, inserted: [] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 1, removedCount: 1, outcome: 'canceled', inserted: [{ id: 'b', role: 'user', content: [], source: { kind: 'plugin', plugin: 'x', form: 'f' } }] } },
  { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [{ id: 'c', role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: 'AA==' }], source: { kind: 'other-kind', x: [1] } }] } },
  { type: 'user/message', data: { id: 'a', role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'user', rpcId: 'r', clientTimeZone: 'UTC' } } },
  { type: 'user/message', data: { id: 'a', role: 'user', content: [], source: { kind: 'subagent-report', childSession: 'c', extra: { y: null } } } },
  { type: 'turn/start', data: { turn: 1 } },
  { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  { type: 'turn/end', data: { turn: 2, reason: { kind: 'aborted', reason: { kind: 'user' } } } },
  { type: 'turn/end', data: { turn: 2, reason: { kind: 'error', error: { message: 'm', code: 'c' } } } },
  { type: 'step/start', data: { turn: 1, step: 1 } },
  { type: 'step/end', data: { turn: 1, step: 2 } },
  { type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, usage: { inputTokens: 1, outputTokens: 2 } } },
  { type: 'assistant/message', data: { turn: 2, step: 3, message: { role: 'assistant', content: [{ type: 'tool-call', callId: 'c1', name: 'noop', arguments: '{}' }], source: { kind: 'model', provider: 'p', model: 'm' } }, interrupted: true } },
  { type: 'tool/call', data: { turn: 1, step: 2, callId: 'c1', name: 'noop', arguments: '{"a":1}' } },
  { type: 'tool/result', data: { turn: 1, step: 2, message: { role: 'tool', callId: 'c1', content: [], isError: true }, error: { name: 'E', code: 'X' } } },
  { type: 'tool/result', data: { turn: 1, step: 2, message: { role: 'tool', callId: 'c1', content: [] }, meta: { k: [1, { z: 'q' }] } } },
];

/** The edit of {@link mutateJson}; a key it adds is named `kind` (a discriminant's name) when `mode % 5 === 0`. */
const mutate = (value: unknown, path: readonly number[], replacement: unknown, mode: number): unknown =>
  mutateJson(value, path, replacement, mode, (m) => (m % 5 === 0 ? 'kind' : 'extra'));
/** JSON as JSON.parse makes it (what the compiled path is given), with -0 kept (JSON.parse can make it: "-0"). */
const owned = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v, (_k, x) => (Object.is(x, -0) ? '__minus_zero__' : x)), (_k, x) => (x === '__minus_zero__' ? -0 : x)));
const edgeValue = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 4, arbitrary: fc.constantFrom(-0, 0, 1, -1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, '', 'text', 'user', 'plugin', 'error', 'aborted', 'next-step', 'canceled', 'completed', null, [], {}, { kind: 'user' }) },
);
const deeplyFrozen = (v: unknown): boolean => typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(deeplyFrozen));

describe('the compiled event validators (domain/event-validators.generated.ts)', () => {
  it('the generated file is what `npm run validators` makes of today\'s zod schemas (regenerate after changing an event schema)', () => {
    const file = readFileSync(fileURLToPath(new URL('../../domain/event-validators.generated.ts', import.meta.url)), 'utf8');
    expect(file).toBe(renderEventValidators());
    expect(EVENT_VALIDATORS).not.toBeNull();
  });

  it('calls the schemas\' own refinements, in the order the runtime collects them', () => {
    const roots = EVENT_TYPES.map((t) => EVENT_DATA_SCHEMAS[t]);
    const compiled = compileSchemas(roots).refinements;
    const collected = schemaRefinements(roots);
    expect(compiled.length).toBe(collected.length);
    compiled.forEach((r, i) => expect(r).toBe(collected[i]));
  });

  it('accepts every sample, leaving it deep-frozen and equal to zod\'s output', () => {
    for (const s of samples) {
      const data = owned(s.data);
      expect(compiledEventValidator(s.type)!(data), s.type).toBe(true);
      expect(deeplyFrozen(data)).toBe(true);
      expect(data).toEqual(EVENT_DATA_SCHEMAS[s.type].parse(s.data));
    }
  });

  it('after a random edit: true only where zod accepts to an equal value; parseEvent answers as the zod path does (same code, path and detail)', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.nat(samples.length - 1), fc.array(fc.nat(20), { maxLength: 5 }), edgeValue, fc.nat(1000), (i, path, replacement, mode) => {
        const { type, data } = samples[i]!;
        const edited = owned(mutate(structuredClone(data), path, replacement, mode));
        const zod = EVENT_DATA_SCHEMAS[type].safeParse(edited);
        const compiledInput = owned(edited);
        if (compiledEventValidator(type)!(compiledInput)) {
          accepted++;
          expect(zod.success).toBe(true);
          expect(compiledInput).toEqual(zod.data);
          expect(deeplyFrozen(compiledInput)).toBe(true);
        } else refused++;
        // the compiled path (owned input) against the path without it (a copy: hand-written fast path, then zod)
        const raw = { seq: 3, id: '00000000-0000-4000-8000-000000000001', time: 5, type, data: owned(edited) };
        const viaCompiled = parseEvent(owned(raw), { owned: true, expectedSeq: 3 });
        const viaZod = parseEvent(raw, { expectedSeq: 3 });
        expect(E.isRight(viaCompiled)).toBe(E.isRight(viaZod));
        if (E.isLeft(viaCompiled) && E.isLeft(viaZod)) expect({ ...viaCompiled.left, message: viaCompiled.left.message }).toEqual({ ...viaZod.left, message: viaZod.left.message });
        if (E.isRight(viaCompiled) && E.isRight(viaZod)) expect(viaCompiled.right).toEqual(viaZod.right);
      }),
      { numRuns: 1000 },
    );
    // both sides are exercised
    expect(accepted).toBeGreaterThan(60);
    expect(refused).toBeGreaterThan(100);
  });
});
