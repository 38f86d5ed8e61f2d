import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { UserMessage } from '../../../domain/message.js';
import type { Agent } from '../../../runtime/agent.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { HOST_RESULT_SCHEMAS } from '../../../host/schemas.js';
import { ChildError } from '../../../domain/children/child-errors.js';
import { silentLogger } from '../../../runtime/logger.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { GateModel } from '../../support/gate-model.js';
import { until } from '../../runtime/children/support.js';
import { errorOf, startTestHost, valueOf, type TestHost } from './http-support.js';

const hosts: TestHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
const text = (t: string) => [{ type: 'text' as const, text: t }];

/** A host with children, a live parent `p` and its continuable child `c` (its first turn held in the gate model). */
const withChild = async (children: (rt: Parameters<NonNullable<Parameters<typeof startTestHost>[0]>['children'] & {}>[0]) => ChildManager = (runtime) => new ChildManager({ runtime, logger: silentLogger })) => {
  let manager!: ChildManager;
  const h = await startTestHost({ children: (rt) => (manager = children(rt)) });
  hosts.push(h);
  valueOf(await h.rpc('session.create', { sessionId: 'p' }));
  const parent = h.host.live.get('p')!.agent;
  await manager.startContinuable(parent, { content: 'task', childSessionId: 'c', label: 'worker' });
  await h.model.started(1);
  return { h, manager, parent, child: () => h.runtime.liveAgent('c')! };
};
const userMessages = (agent: Agent): UserMessage[] => agent.events.filter((e) => e.type === 'user/message').map((e) => e.data as UserMessage);

describe('subagent.prompt', () => {
  it('answers the message id the child inbox accepted; the message carries the user source with rpcId and time zone', async () => {
    const { h, child } = await withChild();
    const r = valueOf<{ messageId: string }>(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('more'), clientTimeZone: 'europe/paris' }, { rpcId: 'rpc-sub-1' }));
    expect(HOST_RESULT_SCHEMAS['subagent.prompt'].parse(r)).toEqual(r);
    const splices = child().events.filter((e) => e.type === 'agent/inbox/spliced').map((e) => e.data as { target: string; inserted: UserMessage[] });
    const pending = splices.flatMap((d) => (d.target === 'next-turn' ? d.inserted : [])).find((m) => m.id === r.messageId);
    expect(pending?.source).toMatchObject({ kind: 'user', rpcId: 'rpc-sub-1', clientTimeZone: 'Europe/Paris' });
    expect(pending?.content).toEqual(text('more'));
    const agent = child();
    h.model.releaseAll();
    // the follow-up runs as the child's next turn
    await until(() => userMessages(agent).some((m) => m.id === r.messageId));
  });

  it('refuses in order: invalid-time-zone, then subagent-parent-unavailable, then subagent-not-found', async () => {
    const { h } = await withChild();
    const ask = (p: Record<string, unknown>) => h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x'), ...p });
    expect(errorOf(await ask({ parentSessionId: 'gone', childSessionId: 'nope', clientTimeZone: '+01:00' }))).toMatchObject({ code: 'invalid-time-zone', details: { value: '+01:00' } });
    expect(errorOf(await ask({ parentSessionId: 'gone', childSessionId: 'nope' }))).toMatchObject({ code: 'subagent-parent-unavailable', details: { parentSessionId: 'gone' } });
    expect(errorOf(await ask({ childSessionId: 'nope' }))).toMatchObject({ code: 'subagent-not-found', details: { parentSessionId: 'p', childSessionId: 'nope' } });
    // an ordinary session, and a child of another parent, are not continuable children of p
    valueOf(await h.rpc('session.create', { sessionId: 'q' }));
    expect(errorOf(await ask({ childSessionId: 'q' })).code).toBe('subagent-not-found');
    expect(errorOf(await ask({ parentSessionId: 'q' })).code).toBe('subagent-not-found');
    expect(errorOf(await ask({ mode: 'one-shot' })).code).toBe('bad-request');
  });

  it('a continuable child in the store without a descriptor of its own is subagent-not-resumable', async () => {
    const store = new MemoryEventStore();
    await createRuntime({ store, model: new GateModel() }).createSession({ sessionId: 'orphan', kind: 'continuable', parentSession: 'p' }).checkpoint();
    const h = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    expect(errorOf(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'orphan', mode: 'continuable', content: text('x') }))).toMatchObject({ code: 'subagent-not-resumable', details: { childSessionId: 'orphan' } });
  });

  it('a draining runtime is subagent-delivery-unavailable', async () => {
    const { h, manager } = await withChild();
    h.model.releaseAll();
    await manager.drain();
    expect(errorOf(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x') }))).toMatchObject({ code: 'subagent-delivery-unavailable', details: { childSessionId: 'c' } });
  });

  it('a refusal the children cannot explain is internal, with no backend text', async () => {
    class Broken extends ChildManager {
      override followup(): never {
        throw new Error('backend secret');
      }
    }
    const { h } = await withChild((runtime) => new Broken({ runtime }));
    const e = errorOf(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x') }));
    expect(e.code).toBe('internal');
    expect(JSON.stringify(e)).not.toContain('backend secret');
  });

  it.each([
    ['subagent-unauthorized', 'subagent-unauthorized'],
    ['subagent-not-resumable', 'subagent-not-resumable'],
    ['subagent-activation-closing', 'subagent-delivery-unavailable'],
    ['subagent-delivery-unavailable', 'subagent-delivery-unavailable'],
    ['subagent-parent-unavailable', 'subagent-parent-unavailable'],
    ['subagent-depth-exceeded', 'internal'],
  ] as const)('a children refusal %s is answered %s', async (childCode, hostCode) => {
    class Refusing extends ChildManager {
      override followup(_p: Agent, childSessionId: string): never {
        throw new ChildError(childCode, childSessionId, 'backend words');
      }
    }
    const { h } = await withChild((runtime) => new Refusing({ runtime }));
    const e = errorOf(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x') }));
    expect(e.code).toBe(hostCode);
    expect(e.message).not.toContain('backend words');
  });

  it('without a children manager the host has no children: subagent-not-found, empty list, interrupt a no-op', async () => {
    const h = await startTestHost();
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    expect(errorOf(await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x') })).code).toBe('subagent-not-found');
    expect(valueOf(await h.rpc('subagent.list', { parentSessionId: 'p' }))).toEqual({ entries: [], parentAvailable: true });
    expect(valueOf(await h.rpc('subagent.interrupt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable' }))).toEqual({ accepted: true });
  });
});

describe('subagent.interrupt and subagent.list', () => {
  it('interrupt cancels the running child and answers {accepted: true}; another parent is subagent-unauthorized; an absent child is a no-op', async () => {
    const { h, child: current } = await withChild();
    const c = current();
    const child = () => c;
    expect(errorOf(await h.rpc('subagent.interrupt', { parentSessionId: 'other', childSessionId: 'c', mode: 'continuable' }))).toMatchObject({ code: 'subagent-unauthorized', details: { childSessionId: 'c' } });
    expect(child().status).toBe('running');
    expect(valueOf(await h.rpc('subagent.interrupt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable' }))).toEqual({ accepted: true });
    await until(() => child().events.some((e) => e.type === 'turn/end' && (e.data as { reason: { kind?: string } | string }).reason !== 'completed'));
    // the parent need not be live: an absent child is an accepted no-op
    expect(valueOf(await h.rpc('subagent.interrupt', { parentSessionId: 'gone', childSessionId: 'none', mode: 'continuable' }))).toEqual({ accepted: true });
  });

  it('list reports the live children and whether the parent is live here', async () => {
    const { h } = await withChild();
    const r = valueOf<{ entries: unknown[]; parentAvailable: boolean }>(await h.rpc('subagent.list', { parentSessionId: 'p' }));
    expect(r).toEqual({ entries: [{ childSessionId: 'c', parentSessionId: 'p', mode: 'continuable', state: 'running', epoch: 1, label: 'worker' }], parentAvailable: true });
    expect(HOST_RESULT_SCHEMAS['subagent.list'].parse(r)).toEqual(r);
    expect(valueOf(await h.rpc('subagent.list', { parentSessionId: 'gone' }))).toEqual({ entries: [], parentAvailable: false });
  });

  it('the generic routes refuse a live child agent-busy', async () => {
    const { h } = await withChild();
    expect(errorOf(await h.rpc('session.prompt', { sessionId: 'c', mode: 'queue', content: text('x') }))).toMatchObject({ code: 'agent-busy', details: { reason: 'subagent-owned' } });
    expect(errorOf(await h.rpc('session.cancel', { sessionId: 'c' }))).toMatchObject({ code: 'agent-busy', details: { reason: 'subagent-owned' } });
  });
});

describe('subagent.prompt and the image limits', () => {
  it('refuses an image the model cannot take or that is over the image limit, as session.prompt does; nothing reaches the child', async () => {
    for (const [host, data, reason] of [
      [{ maxImageBytes: 6 }, 'AAAAAAAAAAAA', 'IMAGE_TOO_LARGE'],
      [{ modelAcceptsImages: false }, 'AAAA', 'MODEL_DOES_NOT_SUPPORT_IMAGES'],
    ] as const) {
      let manager!: ChildManager;
      const h = await startTestHost({ host, children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
      hosts.push(h);
      valueOf(await h.rpc('session.create', { sessionId: 'p' }));
      await manager.startContinuable(h.host.live.get('p')!.agent, { content: 'task', childSessionId: 'c', label: 'worker' });
      await h.model.started(1);
      const before = h.runtime.liveAgent('c')!.events.length;
      const content = [{ type: 'image', mediaType: 'image/png', data, name: 'x.png' }];
      const r = await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content });
      expect(errorOf(r)).toMatchObject({ code: 'attachment-error', details: { reason } });
      expect(h.runtime.liveAgent('c')!.events).toHaveLength(before);
    }
  });
});

describe('subagent.prompt over the event limit', () => {
  it('is message-too-large {limit, size}, as session.prompt is, never internal; nothing reaches the child', async () => {
    const limit = 4096;
    let manager!: ChildManager;
    const h = await startTestHost({ runtime: (o) => createRuntime({ ...o, maxEventBytes: limit }), children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
    hosts.push(h);
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    await manager.startContinuable(h.host.live.get('p')!.agent, { content: 'task', childSessionId: 'c', label: 'worker' });
    await h.model.started(1);
    const before = h.runtime.liveAgent('c')!.events.length;
    const r = await h.rpc('subagent.prompt', { parentSessionId: 'p', childSessionId: 'c', mode: 'continuable', content: text('x'.repeat(limit)) });
    expect(errorOf(r)).toMatchObject({ code: 'message-too-large', details: { limit, size: expect.any(Number) } });
    expect(h.runtime.liveAgent('c')!.events).toHaveLength(before);
  });
});
