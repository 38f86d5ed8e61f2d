import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { HOST_RESULT_SCHEMAS, type HostResult } from '../../../host/schemas.js';
import { silentLogger } from '../../../runtime/logger.js';
import { until } from '../../runtime/children/support.js';
import { errorOf, startTestHost, valueOf, type TestHost } from './http-support.js';

const hosts: TestHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});
type History = HostResult<'subagent.history'>;
const history = async (h: TestHost, payload: Record<string, unknown>): Promise<History> => {
  const v = valueOf<History>(await h.rpc('subagent.history', { parentSessionId: 'p', childSessionId: 'c', ...payload }));
  expect(HOST_RESULT_SCHEMAS['subagent.history'].parse(v)).toEqual(v);
  return v;
};
const brief = (v: History) => v.events.map((e) => `${e.event.seq} ${e.event.type}${e.class ? ` ${e.class}` : ''}`);

/** A host with children and a live parent `p` whose continuable child `c` is in its first turn (held by the gate model). */
const withChild = async (store = new MemoryEventStore()) => {
  let manager!: ChildManager;
  const h = await startTestHost({ store, children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
  hosts.push(h);
  valueOf(await h.rpc('session.create', { sessionId: 'p' }));
  const parent = h.host.live.get('p')!.agent;
  await manager.startContinuable(parent, { content: 'task', childSessionId: 'c', label: 'worker' });
  await h.model.started(1);
  return { h, manager, parent };
};

describe('subagent.history', () => {
  it('a running continuable child: its live log, classified, with what the child is and whether its parent is live', async () => {
    const { h } = await withChild();
    const v = await history(h, {});
    expect(v.child).toEqual({ childSessionId: 'c', parentSessionId: 'p', mode: 'continuable', label: 'worker', state: 'running' });
    expect(v.parentAvailable).toBe(true);
    expect(brief(v)).toEqual([
      '0 session/created',
      '1 subagent/descriptor',
      '2 agent/inbox/spliced',
      '3 turn/start',
      '4 agent/inbox/spliced',
      '5 step/start',
      '6 user/message prompt',
      '7 request/header',
      '8 request/context',
    ]);
    expect(v.lastSeq).toBe(8);
    expect(v.nextAfter).toBeNull();
    // paged like session.history
    const page = await history(h, { after: 1, limit: 2 });
    expect(brief(page)).toEqual(['2 agent/inbox/spliced', '3 turn/start']);
    expect(page.nextAfter).toBe(3);
  });

  it('a settled child is read from the store (absent here); a follow-up it got from its parent\'s model is context', async () => {
    const { h, manager, parent } = await withChild();
    h.model.releaseAll();
    await until(() => manager.state('c') === 'absent');
    await manager.followup(parent, 'c', 'and this', { source: { kind: 'coordinator', form: 'relay', senderSessionId: 'p' } });
    await until(() => manager.state('c') === 'absent' && parent.events.filter((e) => e.type === 'subagent/end').length === 2);
    const v = await history(h, {});
    expect(v.child.state).toBe('absent');
    expect(v.events.filter((e) => e.event.type === 'user/message').map((e) => e.class)).toEqual(['prompt', 'context']);
    const stored: string[] = [];
    for await (const e of h.store.read('c')) stored.push(`${e.revision} ${e.type}`);
    expect(v.events.map((e) => `${e.event.seq} ${e.event.type}`)).toEqual(stored);
  });

  it('a one-shot child is readable too (mode one-shot); the parent need not be live', async () => {
    const store = new MemoryEventStore();
    let manager!: ChildManager;
    const h = await startTestHost({ store, children: (runtime) => (manager = new ChildManager({ runtime, logger: silentLogger })) });
    hosts.push(h);
    h.model.releaseAll();
    valueOf(await h.rpc('session.create', { sessionId: 'p' }));
    await manager.start(h.host.live.get('p')!.agent, { content: 'once', childSessionId: 'c', label: 'one' });
    const v = await history(h, {});
    expect(v.child).toEqual({ childSessionId: 'c', parentSessionId: 'p', mode: 'one-shot', label: 'one', state: 'absent' });
    expect(v.events.at(-1)!.event.type).toBe('turn/end');
    // a second host on the same store, where p is not live: still readable, parentAvailable false
    const other = await startTestHost({ store, children: (runtime) => new ChildManager({ runtime }) });
    hosts.push(other);
    const w = await history(other, {});
    expect(w.parentAvailable).toBe(false);
    expect(w.events).toEqual(v.events);
  });

  it('not a direct child of the named parent (unknown, ordinary, another parent\'s) is subagent-not-found; nothing is resumed', async () => {
    const { h } = await withChild();
    valueOf(await h.rpc('session.create', { sessionId: 'q' }));
    for (const [parentSessionId, childSessionId] of [['p', 'nope'], ['p', 'q'], ['q', 'c'], ['c', 'c']] as const) {
      expect(errorOf(await h.rpc('subagent.history', { parentSessionId, childSessionId }))).toEqual({
        code: 'subagent-not-found',
        message: `${childSessionId} is not a child of ${parentSessionId}`,
        details: { parentSessionId, childSessionId },
      });
    }
    expect(errorOf(await h.rpc('subagent.history', { parentSessionId: 'p', childSessionId: 'c', limit: 0 })).code).toBe('bad-request');
  });
});
