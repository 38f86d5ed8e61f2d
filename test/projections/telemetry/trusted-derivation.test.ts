import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import { createUserMessage } from '../../../domain/message.js';
import { deriveSpans, exportContentAsIs, spanIdOf } from '../../../projections/telemetry/index.js';
import { spanIdsOf } from '../../../projections/telemetry/span-ids.js';
import { SpanSourceField, spanSourceFields } from '../../../projections/telemetry/span-source.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { logArb } from '../support/random-log.js';
import { ADVERSARIAL_SHAPES, adversarialLog } from '../../../bench/support/adversarial-logs.js';
import { toolSessionArb } from '../support/tool-session-log.js';

const example = (name: string): LogEvent[] =>
  readFileSync(new URL(`../../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogEvent);

/** The spans of a log both ways: through the session fold, and trusting the log (the live exporter's way). */
const bothWays = (events: readonly LogEvent[]) => {
  const checked = deriveSpans(events, { content: exportContentAsIs });
  const trusted = deriveSpans(events, { content: exportContentAsIs, validate: false });
  return { checked, trusted };
};

describe('the trusted derivation (validate: false) gives the same spans as the checked one', () => {
  it.each(['queue-steer-context', 'inbox-edits', 'blocked-and-dropped'])('over docs/examples/%s.jsonl', (name) => {
    const { checked, trusted } = bothWays(example(name));
    expect(checked.error).toBeNull();
    expect(checked.spans.some((s) => s.events.length > 0)).toBe(true);
    expect(trusted.spans).toEqual(checked.spans);
  });

  it('over random inbox histories (follow-ups, steers, edits, removals, clears, turns)', () => {
    fc.assert(
      fc.property(logArb(), ({ events }) => {
        const { checked, trusted } = bothWays(events);
        expect(checked.error).toBeNull();
        expect(trusted.spans).toEqual(checked.spans);
      }),
      { numRuns: 150 },
    );
  });

  it.each(ADVERSARIAL_SHAPES)('over the adversarial log "%s" (claims outside turns, long turns, splices anywhere in a long list)', (shape) => {
    const events = [...adversarialLog(shape, 3_000, 300)] as unknown as LogEvent[];
    const { checked, trusted } = bothWays(events);
    expect(checked.error).toBeNull();
    expect(trusted.spans).toEqual(checked.spans);
  });

  it('over random sessions with model calls, retries and tools', () => {
    fc.assert(
      fc.property(toolSessionArb(), ({ events }) => {
        const { checked, trusted } = bothWays(events);
        expect(trusted.spans).toEqual(checked.spans);
      }),
      { numRuns: 60 },
    );
  });

  it('over a fork, whose seed (the parent history, with its own inbox activity) gives no span', async () => {
    const store = new MemoryEventStore();
    const rt = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), logger: silentLogger, clock: steppingClock(), ids: sequentialIds(), writeBatchDelayMs: 1 });
    const parent = rt.createSession({ sessionId: 'fork-parent' });
    parent.followup(createUserMessage('one'));
    await parent.whenIdle();
    parent.followup(createUserMessage('two'));
    await parent.whenIdle();
    await parent.checkpoint();
    const child = await rt.fork('fork-parent', { sessionId: 'fork-child' });
    child.followup(createUserMessage('three'));
    await child.whenIdle();
    const events = child.events;
    const { checked, trusted } = bothWays(events);
    expect(checked.error).toBeNull();
    expect(checked.spans.filter((s) => s.name === 'invoke_agent')).toHaveLength(1);
    expect(trusted.spans).toEqual(checked.spans);
    await child.dispose();
    await parent.dispose();
  });
});

/** The events stripped to what span-source.ts says the derivation reads (seq, time, type, and by type data, metadata, hash). */
const stripped = (events: readonly LogEvent[], content: boolean): LogEvent[] =>
  events.map((e, i) => {
    const fields = spanSourceFields(e.type, content);
    const metadata = { actor: `actor-${i % 3}`, actorKind: 'user' as const };
    return {
      seq: e.seq,
      time: e.time,
      type: e.type,
      ...((fields & SpanSourceField.Data) !== 0 ? { data: e.data } : {}),
      ...((fields & SpanSourceField.Metadata) !== 0 ? { metadata } : {}),
      ...((fields & SpanSourceField.Hash) !== 0 ? { hash: `h${e.seq}` } : {}),
    } as unknown as LogEvent;
  });
/** The same events whole: an id, metadata and a hash on every event. */
const whole = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e, i) => ({ ...e, id: `id-${i}`, metadata: { actor: `actor-${i % 3}`, actorKind: 'user' as const, causationId: 'c' }, hash: `h${e.seq}` }) as LogEvent);

describe('span-source.ts names every field the trusted derivation reads', () => {
  it('with and without a content hook, over random sessions with model calls, retries and tools', () => {
    fc.assert(
      fc.property(toolSessionArb(), fc.boolean(), ({ events }, withContent) => {
        const options = { validate: false, ...(withContent ? { content: exportContentAsIs } : {}) };
        expect(deriveSpans(stripped(events, withContent), options).spans).toEqual(deriveSpans(whole(events), options).spans);
      }),
      { numRuns: 60 },
    );
  });

  it.each(['queue-steer-context', 'inbox-edits'])('with a content hook, over docs/examples/%s.jsonl', (name) => {
    const events = example(name);
    const options = { validate: false, content: exportContentAsIs };
    const spans = deriveSpans(whole(events), options).spans;
    expect(spans.some((s) => s.attributes['gen_ai.input.messages'] !== undefined)).toBe(true);
    expect(deriveSpans(stripped(events, true), options).spans).toEqual(spans);
  });
});

describe('per-session span ids', () => {
  it('equal spanIdOf for any session, kind and seq', () => {
    // seqs as they come, and the numbers whose digits the id's hash does not step over itself (unsafe, negative, fractional)
    const seqs = fc.oneof(fc.nat(), fc.maxSafeNat(), fc.integer({ min: -1e9, max: -1 }), fc.double(), fc.constantFrom(0, 9, 10, 2 ** 53, 2 ** 60, 1e21, Number.MAX_SAFE_INTEGER));
    fc.assert(
      fc.property(fc.string(), fc.string(), seqs, (sessionId, what, seq) => {
        expect(spanIdsOf(sessionId)(what, seq)).toBe(spanIdOf(sessionId, what, seq));
      }),
      { numRuns: 300 },
    );
  });
});
