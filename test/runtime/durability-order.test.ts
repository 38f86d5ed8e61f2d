import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { Agent } from '../../runtime/agent.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { AppendResult, ExpectedRevision, NewEvent } from '../../runtime/ports/event-store.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { Tool } from '../../runtime/tools.js';
import { msg } from '../support/log-builder.js';
import { deferred, tick } from './harness.js';

/** A memory store whose appends can be held one by one: `holdNext()` gates the next append until released. */
class GatedStore extends MemoryEventStore {
  readonly #holds: Promise<void>[] = [];
  /** The event types of every append, in the order the appends started. */
  readonly started: string[][] = [];
  holdNext(): () => void {
    const gate = deferred();
    this.#holds.push(gate.promise);
    return () => gate.resolve();
  }
  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const gate = this.#holds.shift();
    this.started.push(events.map((e) => e.type));
    if (gate) await gate;
    return super.append(stream, events, expected);
  }
}

const storedIds = async (store: MemoryEventStore, stream: string): Promise<string[]> => {
  const out: string[] = [];
  for await (const e of store.read(stream)) out.push(e.id);
  return out;
};

const make = (store: MemoryEventStore, tools: readonly Tool<Agent>[] = [], script: ConstructorParameters<typeof ScriptedModel>[0] = []) =>
  createRuntime({ store, model: new ScriptedModel(script, { whenExhausted: 'ok' }), tools, clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 60_000 }).createSession({
    sessionId: 's',
  });

/** Whether a promise has settled (after the pending microtasks and a macrotask). */
const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await tick();
  await tick();
  return done;
};

describe('durability order', () => {
  it('accept() and checkpoint() never resolve while their own event sits in a later, unacknowledged batch', async () => {
    const store = new GatedStore();
    const agent = make(store);
    const release1 = store.holdNext();
    agent.inject(msg('A'));
    const first = agent.checkpoint(); // batch 1: session/created + A, held
    await tick();
    const release2 = store.holdNext();
    const accepted = agent.accept(msg('B'), { wake: false }); // B's splice: only in batch 2
    const second = agent.checkpoint();
    release1(); // batch 1 acknowledged; batch 2 starts and is held
    await first;
    expect(await settled(accepted)).toBe(false);
    expect(await settled(second)).toBe(false);
    expect(store.started).toEqual([['session/created', 'agent/inbox/spliced'], ['agent/inbox/spliced']]);
    release2();
    const receipt = await accepted;
    await second;
    expect(receipt.seq).toBe(2);
    expect(await storedIds(store, 's')).toEqual(agent.events.map((e) => e.id));
  });

  it('everything logged before a tool body starts (its own tool/call included) is durable when the body runs', async () => {
    const store = new MemoryEventStore();
    const seen: { callId: string; loggedBefore: number; durable: number }[] = [];
    const body = (name: string, parallel: boolean): Tool<Agent> => ({
      name,
      parallel,
      execute: async (_args, { agent, callId }) => {
        const call = agent.events.findIndex((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === callId);
        seen.push({ callId, loggedBefore: call + 1, durable: (await storedIds(store, 's')).length });
        return { content: 'ok' };
      },
    });
    const agent = make(
      store,
      [body('serial', false), body('pooled', true)],
      [{ toolCalls: [{ callId: 'c1', name: 'serial' }, { callId: 'c2', name: 'pooled' }, { callId: 'c3', name: 'pooled' }, { callId: 'c4', name: 'serial' }] }, 'done'],
    );
    agent.followup(msg('A'));
    await agent.whenIdle();
    expect(seen.map((s) => s.callId)).toEqual(['c1', 'c2', 'c3', 'c4']);
    for (const s of seen) expect(s.durable, s.callId).toBeGreaterThanOrEqual(s.loggedBefore);
    await agent.dispose();
  });
});
