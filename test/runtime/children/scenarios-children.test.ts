import { describe, expect, it } from 'vitest';
import type { ChildManager } from '../../../runtime/children/child-manager.js';
import { FaultyStore } from '../../support/faulty-store.js';
import { deferred } from '../harness.js';
import { childSetup } from './child-harness.js';
import { spawnTool, until, userMessageIds } from './support.js';


describe('children scenarios 28–29: deliveries to a resident child', () => {
  it('28: a follow-up to a resident running child queues as its next turn and returns the accepted id', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const gate = deferred();
    h.model.script(c1, async () => {
      await gate.promise;
      return 'first';
    });
    const started = await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1, label: 'worker' });
    h.nameChild(started.messageId, 'm1');
    const child = h.runtime.liveAgent(c1)!;
    await until(() => h.model.requests.some((r) => r.session === c1));
    expect(child.status).toBe('running');
    expect(h.manager.state(c1)).toBe('running');
    const m2 = await h.manager.followup(h.parent, c1, 'more');
    h.nameChild(m2, 'm2');
    expect(child.inbox.nextTurn.map((m) => m.id)).toEqual([m2]);
    gate.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    expect(h.durable(child)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)', 'SPL(NT,0,[m2])', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    const notice = h.parent.events.find((e) => e.type === 'user/message')!;
    h.nameChild((notice.data as { id: string }).id, 'n1');
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NT,0,[n1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'END(C1,1,completed)', 'SS(1,1)', 'UM(n1:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
    expect(notice.data).toMatchObject({
      content: [{ type: 'text', text: `Background subagent ${c1} completed its work.\nIts closing message:\ndone ${c1}` }],
      source: { kind: 'subagent-settled', form: 'notice', senderSessionId: c1 },
    });
  });
});

describe('children scenario 29: a waiting child', () => {
  it('29: a follow-up to an idle child that owns a running grandchild wakes the same activation (no resume)', async () => {
    let manager!: ChildManager;
    const h = childSetup({ tools: [spawnTool(() => manager)] });
    manager = h.manager;
    const c1 = `${h.prefix}-c1`;
    const g = `${h.prefix}-g`;
    h.nameChild(c1, 'C1');
    h.nameChild(g, 'G');
    const gate = deferred();
    h.model.script(c1, { toolCalls: [{ callId: 't1', name: 'spawn', arguments: { id: g, task: 'sub' } }] }, 'spawned');
    h.model.script(g, async () => {
      await gate.promise;
      return 'grand done';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => child.status === 'idle' && h.manager.state(c1) === 'waiting');
    expect(h.manager.list(h.parent.sessionId, 'descendants').map((e) => [h.name(e.childSessionId), e.state])).toEqual([['C1', 'waiting'], ['G', 'running']]);
    const m2 = await h.manager.followup(h.parent, c1, 'more');
    await child.whenIdle();
    expect(h.runtime.liveAgent(c1)).toBe(child);
    gate.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    userMessageIds(child).forEach((id, i) => h.nameChild(id, `u${i}`));
    h.nameChild(m2, 'm2');
    expect(h.durable(child)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[u0])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(u0)', 'AM', 'TC(t1)', 'START(G,1)', 'TR(t1)', 'SE(1,1)',
      'SS(1,2)', 'AM', 'SE(1,2)', 'TE(1,completed)',
      'SPL(NT,0,[m2])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      'SPL(NT,0,[u2])', 'TS(3)', 'SPL(NT,0,rc=1)', 'END(G,1,completed)', 'SS(3,1)', 'UM(u2:subagent-settled)', 'AM', 'SE(3,1)', 'TE(3,completed)',
    ]);
    // one epoch only: the parent's log has a single START for C1
    expect(h.durable(h.parent).filter((d) => d.startsWith('START') || d.startsWith('END'))).toEqual(['START(C1,1)', 'END(C1,1,completed)']);
  });
});

describe('children scenarios 30–32: disposal races, cold resume, not resumable', () => {
  it('30: a follow-up racing disposal waits for it, then cold-resumes a new epoch; the old epoch settles first', async () => {
    const store = new FaultyStore();
    const h = childSetup({ store });
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const release = deferred();
    h.model.script(c1, () => {
      store.hold(release.promise); // nothing the child writes from here on becomes durable until released
      return 'first done';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.isClosing(c1));
    const delivered = h.manager.followup(h.parent, c1, 'again');
    await new Promise<void>((r) => setImmediate(r));
    expect(h.parent.events.some((e) => e.type === 'subagent/end')).toBe(false);
    release.resolve();
    const m2 = await delivered;
    h.nameChild(m2, 'm2');
    const resumed = h.runtime.liveAgent(c1)!;
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    userMessageIds(h.parent).forEach((id, i) => h.nameChild(id, `n${i + 1}`));
    h.nameChild(userMessageIds(resumed)[0]!, 'm1');
    // the old epoch settles (notice, END) before the new epoch's START; the new epoch runs the late delivery
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NT,0,[n1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'END(C1,1,completed)', 'SS(1,1)', 'UM(n1:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'START(C1,2)', 'SPL(NT,0,[n2])', 'TS(2)', 'SPL(NT,0,rc=1)', 'END(C1,2,completed)', 'SS(2,1)', 'UM(n2:subagent-settled)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    expect(h.durable(resumed)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'SPL(NT,0,[m2])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
  });
});
