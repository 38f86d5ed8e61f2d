import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { SubagentDescriptorData } from '../../../domain/children/subagent-events.js';
import type { UserMessage } from '../../../domain/message.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import type { CallResult } from '../../../host/host-types.js';
import { silentLogger } from '../../../runtime/logger.js';
import type { ReadStreamOptions, RecordedEvent } from '../../../runtime/ports/event-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { GateModel } from '../../support/gate-model.js';
import { until } from '../../runtime/children/support.js';
import { startTestHost, valueOf, type TestHost } from './http-support.js';

/** `subagent.prompt` refusals of the catalog check and of the caller's signal: `subagent-catalog-diagnostic`, `cancelled`. */

const hosts: TestHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
const text = (t: string) => [{ type: 'text' as const, text: t }];
const prompt = (childSessionId: string, t = 'more') => ({ parentSessionId: 'p', childSessionId, mode: 'continuable', content: text(t) });
const errorOfCall = (r: CallResult) => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};

/** A stored child of `p` written by another runtime: its header kind and its own descriptor. */
const storeChild = async (store: MemoryEventStore, sessionId: string, kind: 'continuable' | 'one-shot', descriptor: Partial<SubagentDescriptorData>) => {
  const agent = createRuntime({ store, model: new GateModel() }).createSession({ sessionId, kind, parentSession: 'p', origin: 'subagent', delegationDepth: 1 });
  agent.recordChildEvent('subagent/descriptor', { version: 1, mode: 'continuable', provider: 'spawn', label: sessionId, ...descriptor });
  await agent.checkpoint();
  await agent.dispose();
};

/** Holds the n-th read of one stream (counted from `arm`) until `open` is called. */
class GatedStore extends MemoryEventStore {
  #stream = '';
  #countdown = 0;
  #open: () => void = () => {};
  #entered: () => void = () => {};
  reads = 0;
  arm(stream: string, nth: number): { entered: Promise<void>; open: () => void } {
    this.#stream = stream;
    this.#countdown = nth;
    const entered = new Promise<void>((r) => (this.#entered = r));
    const gate = new Promise<void>((r) => (this.#open = r));
    this.#gate = gate;
    return { entered, open: () => this.#open() };
  }
  #gate: Promise<void> = Promise.resolve();
  override async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    if (stream === this.#stream) {
      this.reads++;
      if (this.#countdown > 0 && --this.#countdown === 0) {
        this.#entered();
        await this.#gate;
      }
    }
    yield* super.read(stream, options);
  }
}

describe('subagent.prompt: subagent-catalog-diagnostic', () => {
  it('a stored child whose header kind and own descriptor disagree is a diagnostic row (mode-mismatch); nothing is resumed', async () => {
    const store = new MemoryEventStore();
    await storeChild(store, 'odd', 'continuable', { mode: 'one-shot' });
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    const r = await h.rpc('subagent.prompt', prompt('odd'));
    expect(r.result).toEqual({
      ok: false,
      error: { code: 'subagent-catalog-diagnostic', message: 'child odd cannot take a follow-up here (mode-mismatch)', details: { parentSessionId: 'p', childSessionId: 'odd', reason: 'mode-mismatch' } },
    });
    expect(h.runtime.liveAgent('odd')).toBeUndefined();
    expect(h.host.live.get('p')!.agent.events.map((e) => e.type)).toEqual(['session/created']);
  });

  it('a stored child whose model route this deployment does not serve is a diagnostic row (route-unavailable); a served one resumes', async () => {
    const store = new MemoryEventStore();
    await storeChild(store, 'old', 'continuable', { agentProvider: 'acme', agentModel: 'retired' });
    await storeChild(store, 'new', 'continuable', { agentProvider: 'acme', agentModel: 'current' });
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime, servesRoute: (d) => d.agentModel !== 'retired' }) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    const e = await h.rpc('subagent.prompt', prompt('old'));
    expect(e.result).toEqual({
      ok: false,
      error: { code: 'subagent-catalog-diagnostic', message: 'child old cannot take a follow-up here (route-unavailable)', details: { parentSessionId: 'p', childSessionId: 'old', reason: 'route-unavailable' } },
    });
    expect(h.runtime.liveAgent('old')).toBeUndefined();
    const ok = valueOf<{ messageId: string }>(await h.rpc('subagent.prompt', prompt('new')));
    expect(h.host.live.get('p')!.agent.events.filter((e) => e.type === 'subagent/start').map((e) => e.data)).toEqual([
      { runId: expect.any(String), childSessionId: 'new', mode: 'continuable', epoch: 1, childSeq: 2 },
    ]);
    const child = h.runtime.liveAgent('new')!;
    expect(child.events.some((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: UserMessage[] }).inserted.some((m) => m.id === ok.messageId))).toBe(true);
  });

  it('the parent check and the lineage check come first: another parent\'s diagnostic row is subagent-not-found', async () => {
    const store = new MemoryEventStore();
    await storeChild(store, 'odd', 'continuable', { mode: 'one-shot' });
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(h);
    expect((await h.rpc('subagent.prompt', prompt('odd'))).result).toMatchObject({ ok: false, error: { code: 'subagent-parent-unavailable' } });
    valueOf(await h.rpc('session.create', { sessionId: 'q' }));
    expect((await h.rpc('subagent.prompt', { ...prompt('odd'), parentSessionId: 'q' })).result).toMatchObject({ ok: false, error: { code: 'subagent-not-found' } });
  });
});

describe('subagent.prompt: cancelled', () => {
  const ctx = (signal: AbortSignal) => ({ rpcId: 'r-cancel', principal: { id: 'local' }, signal });

  it('a caller that gave up before the catalog check of a stored child gets cancelled; nothing is resumed or delivered', async () => {
    const store = new MemoryEventStore();
    await storeChild(store, 'cold', 'continuable', {});
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    const ac = new AbortController();
    ac.abort();
    expect(errorOfCall(await h.host.call('subagent.prompt', prompt('cold'), ctx(ac.signal)))).toEqual({ code: 'cancelled', message: 'the request was cancelled before the child accepted a message', details: {} });
    expect(h.runtime.liveAgent('cold')).toBeUndefined();
    expect(h.host.live.get('p')!.agent.events.map((e) => e.type)).toEqual(['session/created']);
    // the parent check still comes first
    expect(errorOfCall(await h.host.call('subagent.prompt', { ...prompt('cold'), parentSessionId: 'gone' }, ctx(ac.signal))).code).toBe('subagent-parent-unavailable');
  });

  it('a resident child: an aborted caller gets cancelled and the child inbox gets nothing', async () => {
    let manager!: ChildManager;
    const h = await startTestHost({ children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    await manager.startContinuable(h.host.live.get('p')!.agent, { content: 'task', childSessionId: 'c' });
    await h.model.started(1);
    const child = h.runtime.liveAgent('c')!;
    const before = child.events.length;
    const ac = new AbortController();
    ac.abort();
    expect(errorOfCall(await h.host.call('subagent.prompt', prompt('c'), ctx(ac.signal))).code).toBe('cancelled');
    expect(child.events.length).toBe(before);
    expect(manager.state('c')).toBe('running');
  });

  it('a delivery that gave up while waiting for the child\'s lock (another delivery cold-resuming it) gets cancelled; the other is delivered once', async () => {
    const store = new GatedStore();
    await storeChild(store, 'cold', 'continuable', {});
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    // the first delivery's catalog read is read 1 of 'cold'; its cold resume's inspection (read 2) is held
    const gate = store.arm('cold', 2);
    const first = h.host.call('subagent.prompt', prompt('cold', 'first'), { rpcId: 'r-1', principal: { id: 'local' } });
    await gate.entered;
    const ac = new AbortController();
    const second = h.host.call('subagent.prompt', prompt('cold', 'second'), ctx(ac.signal));
    await until(() => store.reads === 3); // the second's catalog read is done: it is waiting for the lock
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    ac.abort();
    gate.open();
    const a = await first;
    expect(a.ok).toBe(true);
    expect(errorOfCall(await second).code).toBe('cancelled');
    const child = h.runtime.liveAgent('cold')!;
    const inserted = child.events.filter((e) => e.type === 'agent/inbox/spliced').flatMap((e) => (e.data as { inserted: UserMessage[] }).inserted);
    expect(inserted.map((m) => m.content)).toEqual([text('first')]);
    expect(inserted[0]!.id).toBe((a as { value: { messageId: string } }).value.messageId);
  });
});
