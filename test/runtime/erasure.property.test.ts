import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerWhy } from '../../adapters/cli/why-command.js';
import { batchesOfOne } from '../../audit/log-sources.js';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { createUserMessage, messageText } from '../../domain/message.js';
import { messageFates } from '../../domain/message-fate.js';
import { parseEvent } from '../../domain/parse-event.js';
import { createKeyring } from '../../runtime/content-opener.js';
import type { EncryptionOptions } from '../../runtime/content-sealer.js';
import { eraseKeys } from '../../runtime/erase.js';
import { enter } from '../../runtime/hooks.js';
import { loadSession } from '../../runtime/load-session.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { createRuntime } from '../../runtime/runtime.js';

/** One random session: inputs from a few actors (some rewritten by the pre-step), answers with and without tool calls. */
interface Plan {
  readonly inputs: readonly { readonly text: string; readonly actor: string | null; readonly steer: boolean; readonly rewrite: boolean }[];
  readonly answers: readonly { readonly text: string; readonly args: string | null }[];
}
const planArb: fc.Arbitrary<Plan> = fc.record({
  inputs: fc.array(
    fc.record({ text: fc.string({ maxLength: 12 }), actor: fc.constantFrom(null, 'user:a', 'user:b'), steer: fc.boolean(), rewrite: fc.boolean() }),
    { minLength: 1, maxLength: 4 },
  ),
  answers: fc.array(fc.record({ text: fc.string({ maxLength: 12 }), args: fc.option(fc.string({ maxLength: 12 })) }), { maxLength: 5 }),
});

const run = async (store: EventStore, plan: Plan, encryption?: EncryptionOptions): Promise<void> => {
  let answer = 0;
  const runtime = createRuntime({
    store,
    model: new ScriptedModel([], {
      whenExhausted: () => {
        const a = plan.answers[answer++];
        return a?.args != null ? { toolCalls: [{ callId: `call-${answer}`, name: 'echo', arguments: { q: a.args } }] } : (a?.text ?? 'ok');
      },
    }),
    tools: [{ name: 'echo', execute: (args) => ({ content: JSON.stringify(args) }) }],
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
    ...(encryption ? { encryption } : {}),
  });
  const agent = runtime.createSession({ sessionId: 's' });
  agent.on('pre-step', async ({ messages }, next) => {
    const d = await next();
    const rewritten = messages.map((m) => (messageText(m)?.startsWith('R') ? { ...m, content: [{ type: 'text' as const, text: 'rewritten' }] } : m));
    return d.kind === 'enter' ? enter(rewritten) : d;
  });
  plan.inputs.forEach((input, i) => {
    const m = createUserMessage(`${input.rewrite ? 'R' : 'K'}${input.text}`, { kind: 'user' }, { newId: () => `m${i}` });
    const options = input.actor ? { metadata: { actor: input.actor } } : {};
    if (input.steer) agent.steer(m, options);
    else agent.followup(m, options);
  });
  await agent.whenIdle();
  await agent.checkpoint();
};

const stored = async (store: EventStore): Promise<LogEvent[]> => {
  const out: LogEvent[] = [];
  for await (const r of store.read('s')) out.push(E.getOrElseW((e) => { throw e; })(parseEvent(envelopeOfRecorded(r))));
  return out;
};
const each = async function* (events: readonly LogEvent[]) {
  yield* events;
};
/** Everything but content: the audit fold, every input's fate entries, and `why` for every input id. */
const structureOf = async (events: readonly LogEvent[], ids: readonly string[]) => {
  const { fates } = messageFates(events);
  const whys = [];
  for (const id of ids) {
    const { content: _c, ...w } = await answerWhy('s', id, batchesOfOne(each(events)), createKeyring(null));
    whys.push(w);
  }
  return {
    audit: auditLines('s', events.map((e) => JSON.stringify({ ...e, hash: undefined }))),
    fates: [...fates.values()].map((f) => ({ id: f.id, source: f.source, entries: f.entries })),
    whys,
  };
};

describe('erasure keeps the structure (property)', () => {
  it('for random sessions, audit, fates and why are the same in clear, encrypted, and after erasing the session or an actor', async () => {
    await fc.assert(
      fc.asyncProperty(planArb, fc.constantFrom<{ session: string } | { actor: string }>({ session: 's' }, { actor: 'user:a' }, { actor: 'user:b' }), async (plan, selector) => {
        const ids = plan.inputs.map((_, i) => `m${i}`);
        const clear = new MemoryEventStore();
        await run(clear, plan);
        const expected = await structureOf(await stored(clear), ids);
        expect(expected.audit.ok).toBe(true);

        const store = new MemoryEventStore();
        const keys = new MemoryKeyStore();
        await run(store, plan, { keys });
        expect(await structureOf(await stored(store), ids)).toEqual(expected);
        expect(await structureOf((await loadSession(store, 's', keys)).events, ids)).toEqual(expected);

        await eraseKeys({ store, keys, selector, clock: steppingClock(2_000_000_000_000), ids: sequentialIds(999), logger: silentLogger });
        const erased = (await loadSession(store, 's', keys)).events.filter((e) => e.type !== 'session/erased');
        expect(await structureOf(erased, ids)).toEqual(expected);
      }),
      { numRuns: Number(process.env.STEERLOG_ERASURE_RUNS ?? 10) },
    );
  });
});
