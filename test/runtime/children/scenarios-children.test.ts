import { describe, expect, it } from 'vitest';
import { deferred } from '../harness.js';
import { childSetup } from './child-harness.js';

/** Polls (one macrotask at a time) until `predicate` holds; fails after many rounds instead of hanging. */
export const until = async (predicate: () => boolean, rounds = 2000): Promise<void> => {
  for (let i = 0; i < rounds; i++) {
    if (predicate()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error('condition never held');
};

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
