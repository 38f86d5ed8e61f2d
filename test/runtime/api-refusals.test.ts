import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isInvalidMessageError } from '../../domain/errors.js';
import type { Agent } from '../../runtime/agent.js';
import { isRuntimeError } from '../../runtime/errors.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { isInvalidStreamIdError } from '../../runtime/ports/store-errors.js';
import { createRuntime } from '../../runtime/runtime.js';
import { msg } from '../support/log-builder.js';
import { expectLogAgrees, setup } from './harness.js';

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

const newRuntime = () => {
  const store = new MemoryEventStore();
  const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1 });
  return { store, runtime };
};

const storedEvents = async (store: MemoryEventStore): Promise<number> => {
  let n = 0;
  for await (const _ of store.readAll()) n++;
  return n;
};

describe('bad session ids are refused at createSession, resume and fork with the store’s own error', () => {
  const BAD = ['x'.repeat(201), 'a\u0000b', 'line\nbreak', 'cr\rhere', 'lone \ud800 high', 'lone \udc00 low', '', 42, null];

  it.each(BAD.map((id) => [JSON.stringify(id), id]))('%s', async (_, id) => {
    const { store, runtime } = newRuntime();
    expect(isInvalidStreamIdError(thrown(() => runtime.createSession({ sessionId: id as string })))).toBe(true);
    expect(isInvalidStreamIdError(thrown(() => runtime.createSession({ parentSession: id as string })))).toBe(true);
    expect(isInvalidStreamIdError(await runtime.resume(id as string).catch((e: unknown) => e))).toBe(true);
    expect(isInvalidStreamIdError(await runtime.fork(id as string).catch((e: unknown) => e))).toBe(true);
    const parent = runtime.createSession({ sessionId: 'parent' });
    await parent.dispose();
    expect(isInvalidStreamIdError(await runtime.fork('parent', { sessionId: id as string }).catch((e: unknown) => e))).toBe(true);
    await new Promise((r) => setTimeout(r, 10));
    // only the parent's session/created was ever written
    expect(await storedEvents(store)).toBe(1);
  });
});

describe('typed errors for hostile values', () => {
  it('queue.edit with a bigint, a Proxy or a throwing getter is a typed refusal; nothing is written', async () => {
    const h = setup();
    h.agent.send(msg('Q'), 'next-turn', false);
    const before = h.agent.events.length;
    const hostile: unknown[] = [
      5n,
      new Proxy([], { get: () => { throw new Error('trap'); } }),
      [{ type: 'text', get text(): string { throw new Error('getter'); } }],
      { toString: 1 },
      Object.create(null),
    ];
    for (const content of hostile) {
      const r = h.agent.queue.edit('Q', content as never);
      expect(E.isLeft(r)).toBe(true);
      expect(isInvalidMessageError(E.isLeft(r) ? r.left : null)).toBe(true);
    }
    expect(E.isLeft(h.agent.queue.edit(5n as never, 'x'))).toBe(true);
    expect(h.agent.events.length).toBe(before);
    await expectLogAgrees(h.agent, h.store);
  });

  it('messages with throwing getters or Proxies are refused with invalid-message; a getter that changes its answer is read once', async () => {
    const h = setup();
    const before = h.agent.events.length;
    const throwingGetter = { ...msg('A'), get content(): never { throw new Error('boom'); } };
    const throwingProxy = new Proxy(msg('B'), { ownKeys: () => { throw new Error('trap'); } });
    const throwingNested = { ...msg('C'), source: new Proxy({ kind: 'user' }, { get: () => { throw new Error('trap'); } }) };
    for (const m of [throwingGetter, throwingProxy, throwingNested]) {
      expect(isInvalidMessageError(thrown(() => h.agent.followup(m as never)))).toBe(true);
      expect(isInvalidMessageError(thrown(() => h.agent.inbox.append('next-step', m as never)))).toBe(true);
    }
    expect(h.agent.events.length).toBe(before);
    let reads = 0;
    const fickle = { id: 'D', role: 'user', source: { kind: 'user' }, get content() { return reads++ === 0 ? [{ type: 'text', text: 'first' }] : 7; } };
    h.agent.inject(fickle as never);
    expect(h.agent.inbox.nextStep[0]!.content).toEqual([{ type: 'text', text: 'first' }]);
    await expectLogAgrees(h.agent, h.store);
  });

  it('runMaintenance on a disposed agent refuses (session-closed)', async () => {
    const h = setup();
    await h.agent.dispose();
    let ran = false;
    const e = thrown(() => h.agent.runMaintenance(() => void (ran = true)));
    expect(isRuntimeError(e) && e.code).toBe('session-closed');
    expect(ran).toBe(false);
  });
});

/** Codes a public call may refuse with; anything else (a TypeError, a raw errno) is a defect. */
const TYPED = new Set([
  'invalid-message',
  'invalid-splice',
  'duplicate-pending-id',
  'invalid-argument',
  'message-too-large',
  'maintenance-unavailable',
  'queue-item-not-found',
  'steer-unavailable',
  'queue-edit-non-text',
  'invalid-stream-id',
  'session-live',
  'session-not-found',
  'invalid-fork-boundary',
]);

const expectTyped = (e: unknown, what: string): void => {
  expect(e instanceof Error, `${what}: ${String(e)}`).toBe(true);
  const code = (e as { code?: unknown }).code;
  expect(TYPED.has(code as string), `${what}: ${String(code)} ${(e as Error).message}`).toBe(true);
};

const ANYTHING = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});
/** Arguments: anything, or a plausible value (valid messages, targets, ids), so calls also succeed and change state. */
const ARG = fc.oneof(
  { arbitrary: ANYTHING, weight: 3 },
  { arbitrary: fc.constantFrom('A', 'B', 'C').map((id) => msg(id)), weight: 2 },
  { arbitrary: fc.constantFrom('next-turn', 'next-step', 'A', 'B', 0, 1, true, false, undefined), weight: 2 },
);

type Call = (agent: Agent, a: unknown, b: unknown, c: unknown) => unknown;
const pendingId = (g: Agent): string => g.inbox.nextTurn[0]?.id ?? g.inbox.nextStep[0]?.id ?? 'none';
const CALLS: Record<string, Call> = {
  followup: (g, a) => g.followup(a as never),
  steer: (g, a) => g.steer(a as never),
  inject: (g, a) => g.inject(a as never),
  send: (g, a, b, c) => g.send(a as never, b as never, c as never),
  accept: (g, a, b) => g.accept(a as never, b as never),
  cancel: (g, a, b) => g.cancel(a as never, b as never),
  wake: (g) => g.wake(),
  'inbox.splice': (g, a, b, c) => g.inbox.splice(a as never, b as never, c as never, msg('S')),
  'inbox.append': (g, a, b) => g.inbox.append(a as never, b as never),
  'inbox.prepend': (g, a, b) => g.inbox.prepend(a as never, b as never),
  'inbox.replace': (g, a, b) => g.inbox.replace(a as never, b as never),
  'inbox.remove': (g, a) => g.inbox.remove(a as never),
  'queue.edit': (g, a, b) => g.queue.edit(a as never, b as never),
  // the same on a pending item, so arbitrary content reaches the edit itself
  'queue.edit pending': (g, a) => g.queue.edit(pendingId(g), a as never),
  'inbox.replace pending': (g, a) => g.inbox.replace(pendingId(g), a as never),
  'queue.remove': (g, a) => g.queue.remove(a as never),
  'queue.steer': (g, a) => g.queue.steer(a as never),
  runMaintenance: (g, a) => g.runMaintenance(a as never),
  on: (g, a, b) => g.on(a as never, b as never),
  onEvent: (g, a) => g.onEvent(a as never),
  addCommitCheck: (g, a) => g.addCommitCheck(a as never),
};

describe('the public API under arbitrary values', () => {
  it('every call succeeds or refuses with a typed error; a refusal writes nothing; the log stays valid and reaches the store', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...Object.keys(CALLS)), ARG, ARG, ARG), { minLength: 1, maxLength: 25 }), async (script) => {
        const h = setup();
        for (const [name, a, b, c] of script) {
          const before = h.agent.events.length;
          const inbox = h.agent.inbox.state;
          let outcome: unknown;
          try {
            outcome = CALLS[name]!(h.agent, a, b, c);
          } catch (e) {
            expectTyped(e, name);
            expect(h.agent.events.length, name).toBe(before);
            expect(h.agent.inbox.state, name).toBe(inbox);
            continue;
          }
          if (outcome instanceof Promise) {
            const settled = await outcome.then(() => null, (e: unknown) => e);
            if (settled !== null) expectTyped(settled, name);
          } else if (typeof outcome === 'object' && outcome !== null && '_tag' in outcome && E.isLeft(outcome as E.Either<unknown, unknown>)) {
            expectTyped((outcome as E.Left<unknown>).left, name);
            expect(h.agent.events.length, name).toBe(before);
          }
        }
        await h.agent.whenIdle();
        await expectLogAgrees(h.agent, h.store);
        await h.agent.dispose();
      }),
      { numRuns: Number(process.env.STEERLOG_API_FUZZ_RUNS ?? 150) },
    );
  });

  it('createRuntime with arbitrary options (or arbitrary values in each option) refuses with a typed error', () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([]);
    const KEYS = ['store', 'model', 'tools', 'clock', 'ids', 'logger', 'writeBatchDelayMs', 'toolConcurrency', 'maxEventBytes'] as const;
    fc.assert(
      fc.property(ANYTHING, fc.constantFrom(...KEYS), ANYTHING, (options, key, value) => {
        try {
          createRuntime(options as never);
        } catch (e) {
          expectTyped(e, 'createRuntime');
        }
        try {
          createRuntime({ store, model, [key]: value } as never);
        } catch (e) {
          expectTyped(e, `createRuntime ${key}`);
        }
      }),
      { numRuns: Number(process.env.STEERLOG_API_FUZZ_RUNS ?? 150) },
    );
  });

  it('runtime calls: createSession, resume and fork with arbitrary arguments succeed or refuse with a typed error, writing nothing when refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('createSession', 'resume', 'fork'), ANYTHING, ANYTHING, async (name, a, b) => {
        const { store, runtime } = newRuntime();
        const parent = runtime.createSession({ sessionId: 'p' });
        await parent.dispose();
        const before = await storedEvents(store);
        let outcome: unknown;
        try {
          outcome = name === 'createSession' ? runtime.createSession(a as never) : await (runtime[name] as (x: unknown, y: unknown) => Promise<Agent>)(a, b);
        } catch (e) {
          expectTyped(e, name);
          await new Promise((r) => setTimeout(r, 5));
          expect(await storedEvents(store)).toBe(before);
          return;
        }
        await (outcome as Agent).dispose();
      }),
      { numRuns: Number(process.env.STEERLOG_API_FUZZ_RUNS ?? 150) },
    );
  });
});
