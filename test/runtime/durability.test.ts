import { describe, expect, it, vi } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isSessionFencedError } from '../../runtime/errors.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import { FaultyStore } from '../support/faulty-store.js';
import { msg } from '../../testing/log-builder.js';
import { deferred, notate } from './harness.js';

const make = (store: MemoryEventStore, writeBatchDelayMs = 200, model = new ScriptedModel([], { whenExhausted: 'ok' })) => {
  const rt = createRuntime({ store, model, clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs });
  return { rt, model, agent: rt.createSession({ sessionId: 's' }) };
};
const stored = async (store: MemoryEventStore, stream = 's') => {
  const out = [];
  for await (const e of store.read(stream)) out.push(e);
  return out;
};

describe('write-behind and checkpoints (docs/protocol.md §11, scenario 60)', () => {
  it('60: a send is accepted synchronously but not durable until the window or a checkpoint', async () => {
    const store = new MemoryEventStore();
    const { agent } = make(store, 60_000);
    agent.inject(msg('C'));
    expect(agent.events.at(-1)!.type).toBe('agent/inbox/spliced');
    expect((await stored(store)).length).toBe(0);
    await agent.checkpoint();
    expect((await stored(store)).map((e) => e.type)).toEqual(['session/created', 'agent/inbox/spliced']);
  });

  it('the fixed window batches everything logged inside it into one append', async () => {
    const store = new FaultyStore();
    const { agent } = make(store, 30);
    agent.inject(msg('A'));
    agent.inject(msg('B'));
    expect(store.calls).toEqual([]); // nothing is written before the window expires
    await vi.waitFor(() => expect(store.calls.length).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
    expect(store.calls.map((c) => c.ids.length)).toEqual([3]);
  });

  it('with a turn gate, a window whose time is up waits for its slice before its batch goes to the store; a checkpoint does not', async () => {
    const store = new FaultyStore();
    const slices: (() => void)[] = [];
    const turnGate = { next: () => new Promise<void>((resolve) => slices.push(resolve)) };
    const rt = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 10, turnGate });
    const agent = rt.createSession({ sessionId: 's' });
    agent.inject(msg('A'));
    await vi.waitFor(() => expect(slices.length).toBe(1), { timeout: 10_000, interval: 5 });
    // the window expired, the gate has not released it: nothing written, and more events join the same batch
    agent.inject(msg('B'));
    await new Promise((r) => setTimeout(r, 30));
    expect(store.calls).toEqual([]);
    expect(slices.length).toBe(1);
    slices.shift()!();
    await vi.waitFor(() => expect(store.calls.length).toBe(1), { timeout: 10_000, interval: 5 });
    expect(store.calls.map((c) => c.ids.length)).toEqual([3]);
    // a checkpoint drains at once, gate or not; the window it cut short asks the gate for nothing afterwards
    agent.inject(msg('C'));
    await agent.checkpoint();
    expect(store.calls.map((c) => c.ids.length)).toEqual([3, 1]);
    await new Promise((r) => setTimeout(r, 30));
    expect(slices.length).toBe(0);
    expect(store.calls.length).toBe(2);
  });

  it('the driver makes enqueue, turn/start and claim durable before pre-step, and the step before the model call', async () => {
    const store = new MemoryEventStore();
    const seen: string[][] = [];
    const model = new ScriptedModel([], {
      whenExhausted: async () => {
        seen.push((await stored(store)).map((e) => notate({ ...e, seq: Number(e.revision) } as never)));
        return 'ok';
      },
    });
    const { agent } = make(store, 60_000, model);
    agent.on('pre-step', async (c, next) => {
      seen.push((await stored(store)).map((e) => notate({ ...e, seq: Number(e.revision) } as never)));
      return next();
    });
    agent.followup(msg('A'));
    await agent.whenIdle();
    expect(seen[0]).toEqual(['session/created', 'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)']);
    // the request's provenance is durable with its step, before the model call
    expect(seen[1]!.slice(-4)).toEqual(['SS(1,1)', 'UM(A)', 'RH(initial)', 'RC']);
  });

  it('a failed batch is retried in order at the next checkpoint and never duplicated, even when the ack was lost', async () => {
    const store = new FaultyStore().failNext('fail', 'lose-ack');
    const { agent } = make(store, 60_000);
    agent.inject(msg('A'));
    await expect(agent.checkpoint()).rejects.toMatchObject({ code: 'store-io' });
    agent.inject(msg('B'));
    await expect(agent.checkpoint()).rejects.toMatchObject({ code: 'store-io' }); // written, ack lost
    await agent.checkpoint(); // retry: the store recognizes the ids, nothing is written twice
    const events = await stored(store);
    expect(events.map((e) => e.id)).toEqual(agent.events.map((e) => e.id));
    expect(events.map((e) => Number(e.revision))).toEqual([0, 1, 2]);
  });

  it('a checkpoint failure before the model call fails closed: no model call, the turn ends error', async () => {
    const store = new FaultyStore();
    const model = new ScriptedModel([], { whenExhausted: 'ok' });
    const { agent } = make(store, 60_000, model);
    agent.on('pre-step', (_c, next) => {
      store.failNext('fail'); // the pre-step checkpoint has passed; the one before the model call will fail
      return next();
    });
    agent.followup(msg('A'));
    await agent.whenIdle();
    expect(model.requests).toHaveLength(0);
    expect(agent.events.map(notate).slice(-6)).toEqual(['SS(1,1)', 'UM(A)', 'RH(initial)', 'RC', 'SE(1,1)', 'TE(1,error:UNKNOWN)']);
    await agent.checkpoint();
    expect((await stored(store)).length).toBe(agent.events.length);
  });

  it('accept() resolves only once the splice is durable', async () => {
    const store = new FaultyStore();
    const release = deferred();
    store.hold(release.promise);
    const { agent } = make(store, 0);
    let resolved = false;
    const receipt = agent.accept(msg('A'), { target: 'next-turn', wake: false }).then((r) => ((resolved = true), r));
    await new Promise((r) => setTimeout(r, 20));
    expect(resolved).toBe(false);
    release.resolve();
    expect(await receipt).toEqual({ messageId: 'A', seq: 1, target: 'next-turn' });
    expect((await stored(store)).map((e) => e.type)).toContain('agent/inbox/spliced');
  });

  it('accept() rejects when the store refuses the write; the message stays admitted live', async () => {
    const store = new FaultyStore().failNext('fail');
    const { agent } = make(store, 0);
    await expect(agent.accept(msg('A'), { wake: false })).rejects.toMatchObject({ code: 'store-io' });
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['A']);
  });

  it('a second writer on the same stream fences the session: it stops writing and refuses appends, never forking the log', async () => {
    const store = new MemoryEventStore();
    const { agent } = make(store, 0);
    await agent.checkpoint();
    await store.append('s', [{ id: 'intruder', type: 'x/y', time: 1, data: {}, ignorable: true }], 0n);
    const reported: string[] = [];
    agent.on('error', (e) => reported.push(e.error.code));
    agent.inject(msg('A'));
    const err = await agent.checkpoint().then(() => null, (e: unknown) => e);
    expect(isSessionFencedError(err)).toBe(true);
    expect(reported).toEqual(['session-fenced']);
    expect(() => agent.inject(msg('B'))).toThrow(expect.objectContaining({ code: 'session-fenced' }));
    expect((await stored(store)).map((e) => e.id)).toEqual([agent.events[0]!.id, 'intruder']);
  });
});
