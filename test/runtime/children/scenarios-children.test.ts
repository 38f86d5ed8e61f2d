import { describe, expect, it } from 'vitest';
import type { ChildManager } from '../../../runtime/children/child-manager.js';
import { FaultyStore } from '../../support/faulty-store.js';
import { deferred } from '../harness.js';
import { hasChildCode } from '../../../domain/children/child-errors.js';
import { msg } from '../../../testing/log-builder.js';
import { childSetup, restartedSetup, storedEvents } from './child-harness.js';
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

describe('children scenarios 31–34: cold resume, refusals, an offline parent', () => {
  it('31: a follow-up to an absent child (after a restart) resumes it from its own descriptor; its parked work runs first', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    const gate = deferred();
    h.model.script(c1, async (req) => {
      await gate.promise;
      if (req.signal.aborted) throw new Error('aborted');
      return 'never';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => h.model.requests.some((r) => r.session === c1));
    const m2 = await h.manager.followup(h.parent, c1, 'parked');
    expect(h.manager.interrupt(c1, { kind: 'user', parentSessionId: h.parent.sessionId })).toBe(true);
    gate.resolve();
    await child.whenIdle();
    expect(h.manager.state(c1)).toBe('running'); // m2 accepted but not claimed: the activation stays
    await child.checkpoint();
    await h.parent.checkpoint();
    // a restart: a new runtime and manager over the same store; the parent is resumed, the child is absent
    const r = await restartedSetup(h.store, h.model, h.parent.sessionId);
    r.nameChild(c1, 'C1');
    expect(r.manager.state(c1)).toBe('absent');
    const m3 = await r.manager.followup(r.parent, c1, 'after restart');
    const resumed = r.runtime.liveAgent(c1)!;
    await until(() => r.manager.state(c1) === 'absent');
    await r.parent.whenIdle();
    r.nameChild(userMessageIds(resumed)[0]!, 'm1');
    r.nameChild(m2, 'm2');
    r.nameChild(m3, 'm3');
    expect(r.durable(resumed)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)', 'SPL(NT,0,[m2])', 'SE(1,1)', 'TE(1,aborted:user)',
      // epoch 2: the parked m2 runs before m3
      'SPL(NT,1,[m3])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      'TS(3)', 'SPL(NT,0,rc=1)', 'SS(3,1)', 'UM(m3)', 'AM', 'SE(3,1)', 'TE(3,completed)',
    ]);
    const starts = r.parent.events.filter((e) => e.type === 'subagent/start').map((e) => (e.data as { epoch: number }).epoch);
    expect(starts).toEqual([1, 2]);
  });

  it('32: a fork-seeded child whose only descriptor is inherited is not resumable; nor is a one-shot child', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    // F is a fork of C1: its seed holds C1's descriptor, its header names C1 as parent
    const fork = await h.runtime.fork(c1, { sessionId: `${h.prefix}-f` });
    await fork.dispose();
    const c1Agent = await h.runtime.resume(c1);
    const before = (await storedEvents(h.store, fork.sessionId)).length;
    const refused = await h.manager.followup(c1Agent, fork.sessionId, 'x').catch((e: unknown) => e);
    expect(hasChildCode(refused, 'subagent-not-resumable')).toBe(true);
    expect((await storedEvents(h.store, fork.sessionId)).length).toBe(before);
    expect(c1Agent.events.some((e) => e.type === 'subagent/start')).toBe(false);
    // a one-shot child returns one result and is never resumed
    const once = await h.manager.start(h.parent, { content: 'one thing', childSessionId: `${h.prefix}-o` });
    expect(once).toMatchObject({ stopReason: 'completed', text: `done ${h.prefix}-o` });
    const notOneShot = await h.manager.followup(h.parent, once.childSessionId, 'more').catch((e: unknown) => e);
    expect(hasChildCode(notOneShot, 'subagent-not-resumable')).toBe(true);
    expect(h.manager.interrupt(once.childSessionId, { kind: 'user', parentSessionId: h.parent.sessionId })).toBe(false);
  });

  it('33: another parent, and a stale parent object, are refused before anything of the child is read or resumed', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    const other = h.runtime.createSession({ sessionId: `${h.prefix}-p2`, systemPrompt: 'other' });
    const before = (await storedEvents(h.store, c1)).length;
    const refused = await h.manager.followup(other, c1, 'hijack').catch((e: unknown) => e);
    expect(hasChildCode(refused, 'subagent-unauthorized')).toBe(true);
    expect(h.runtime.liveAgent(c1)).toBeUndefined();
    expect((await storedEvents(h.store, c1)).length).toBe(before);
    // through the model tool: an error result, nothing delivered
    h.model.script('other', { toolCalls: [{ callId: 's1', name: 'send_message', arguments: { subagent_id: c1, message: 'hijack' } }] }, 'ok');
    other.followup(msg('go'));
    await other.whenIdle();
    const result = other.events.find((e) => e.type === 'tool/result')!.data as { message: { content: { text: string }[]; isError?: boolean } };
    expect(result.message).toMatchObject({ isError: true, content: [{ type: 'text', text: `subagent ${c1} belongs to another parent session` }] });
    // a stale parent object: the same id, replaced by a resumed agent
    await h.parent.dispose();
    const fresh = await h.runtime.resume(h.parent.sessionId, { systemPrompt: 'parent' });
    const stale = await h.manager.followup(h.parent, c1, 'from the old object').catch((e: unknown) => e);
    expect(hasChildCode(stale, 'subagent-unauthorized')).toBe(true);
    expect(h.runtime.liveAgent(c1)).toBeUndefined();
    await expect(h.manager.followup(fresh, c1, 'from the live parent')).resolves.toEqual(expect.any(String));
  });

  it('34: with the parent offline a report is refused, the settlement is dropped, and a user interrupt still works', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    const gate = deferred();
    h.model.script(
      c1,
      async () => {
        await gate.promise;
        return { toolCalls: [{ callId: 'r1', name: 'report', arguments: { output: 'half way' } }] };
      },
      async (req) => {
        await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new Error('aborted');
      },
    );
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await h.parent.dispose();
    const parentEvents = h.parent.events.length;
    gate.resolve();
    await until(() => child.events.some((e) => e.type === 'tool/result'));
    const result = child.events.find((e) => e.type === 'tool/result')!.data as { message: unknown };
    expect(result.message).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the direct parent is not live; the report was not delivered' }] });
    await until(() => h.model.requests.filter((r) => r.session === c1).length === 2);
    expect(h.manager.interrupt(c1, { kind: 'user', parentSessionId: h.parent.sessionId })).toBe(true);
    await until(() => h.manager.state(c1) === 'absent');
    expect(child.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted', reason: { kind: 'user' } } } });
    expect(h.parent.events.length).toBe(parentEvents); // nothing reached the offline parent
  });
});

/** A scripted step that reports `output` through the model tool `report`. */
const reportStep = (callId: string, output: string) => ({ toolCalls: [{ callId, name: 'report', arguments: { output } }] });
/** A parent step that waits for `gate` (the parent stays running meanwhile). */
const waitFor = (gate: Promise<void>) => async () => {
  await gate;
  return 'parent step';
};

describe('children scenarios 35–39: report, then settlement', () => {
  it('35: with the parent running, the report and the settlement land in next-step in that order and enter one step', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const parentGate = deferred();
    h.model.script('parent', waitFor(parentGate.promise));
    h.model.script(c1, reportStep('r1', 'half way'), 'all done');
    h.parent.followup(msg('A'));
    h.nameChild('A', 'A');
    await until(() => h.model.requests.some((r) => r.session === 'parent'));
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    const [report, notice] = h.parent.inbox.nextStep;
    expect([report?.source.kind, notice?.source.kind]).toEqual(['subagent-report', 'subagent-settled']);
    h.nameChild(report!.id, 'R');
    h.nameChild(notice!.id, 'N');
    parentGate.resolve();
    await h.parent.whenIdle();
    expect(h.durable(h.parent)).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'START(C1,1)', 'SPL(NS,0,[R])', 'SPL(NS,1,[N])', 'END(C1,1,completed)', 'AM', 'SE(1,1)',
      'SPL(NS,0,rc=2)', 'SS(1,2)', 'UM(R:subagent-report)', 'UM(N:subagent-settled)', 'AM', 'SE(1,2)', 'TE(1,completed)',
    ]);
    expect((report!.content[0] as { text: string }).text).toBe(`Background subagent ${c1} reported:\nhalf way`);
    expect(report!.source).toEqual({ kind: 'subagent-report', form: 'relay', senderSessionId: c1 });
  });

  it('36: a report to an idle parent opens its turn and is claimed at once; the settlement follows it', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const parentGate = deferred();
    h.model.script('parent', waitFor(parentGate.promise));
    const childGate = deferred();
    h.model.script(c1, reportStep('r1', 'early'), async () => {
      await childGate.promise;
      return 'finished';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.parent.status === 'running');
    const reportSplice = h.parent.events.find((e) => e.type === 'agent/inbox/spliced')!;
    const reportId = (reportSplice.data as { inserted: { id: string }[] }).inserted[0]!.id;
    h.nameChild(reportId, 'R');
    expect(h.parent.inbox.nextStep).toEqual([]); // claimed synchronously by the turn the report opened
    // let the parent reach its model call (on a real database its checkpoints take a while) before the child ends
    await until(() => h.model.requests.some((r) => r.session === 'parent'));
    childGate.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    h.nameChild(h.parent.inbox.nextStep[0]!.id, 'N');
    parentGate.resolve();
    await h.parent.whenIdle();
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NS,0,[R])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SS(1,1)', 'UM(R:subagent-report)', 'SPL(NS,0,[N])', 'END(C1,1,completed)', 'AM', 'SE(1,1)',
      'SPL(NS,0,rc=1)', 'SS(1,2)', 'UM(N:subagent-settled)', 'AM', 'SE(1,2)', 'TE(1,completed)',
    ]);
  });

  it('37: during parent maintenance the report waits in next-step (latched), the settlement in next-turn; one claim takes both', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const maintenance = deferred();
    const done = h.parent.runMaintenance(() => maintenance.promise);
    h.model.script(c1, reportStep('r1', 'early'), 'finished');
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    expect(h.parent.status).toBe('idle');
    const [report] = h.parent.inbox.nextStep;
    const [notice] = h.parent.inbox.nextTurn;
    h.nameChild(report!.id, 'R');
    h.nameChild(notice!.id, 'N');
    maintenance.resolve();
    await done;
    await h.parent.whenIdle();
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NS,0,[R])', 'SPL(NT,0,[N])', 'END(C1,1,completed)',
      'TS(1)', 'SPL(NS,0,rc=1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(R:subagent-report)', 'UM(N:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
  });

  it('38: a quiet report is injected without waking; the settlement follow-up opens the turn that carries both', async () => {
    const h = childSetup({ reportDelivery: 'quiet' });
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const childGate = deferred();
    h.model.script(c1, reportStep('r1', 'fyi'), async () => {
      await childGate.promise;
      return 'finished';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.parent.inbox.nextStep.length === 1);
    expect(h.parent.status).toBe('idle');
    h.nameChild(h.parent.inbox.nextStep[0]!.id, 'R');
    childGate.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    h.nameChild(userMessageIds(h.parent)[1]!, 'N');
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NS,0,[R])', 'SPL(NT,0,[N])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SPL(NT,0,rc=1)', 'END(C1,1,completed)',
      'SS(1,1)', 'UM(R:subagent-report)', 'UM(N:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
  });

  it('39: a report from a closing child is refused with subagent-activation-closing', async () => {
    const store = new FaultyStore();
    const h = childSetup({ store });
    const c1 = `${h.prefix}-c1`;
    const release = deferred();
    h.model.script(c1, () => {
      store.hold(release.promise);
      return 'done';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => h.manager.isClosing(c1));
    let refused: unknown;
    try {
      h.manager.report(child, 'too late');
    } catch (e) {
      refused = e;
    }
    expect(hasChildCode(refused, 'subagent-activation-closing')).toBe(true);
    release.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    // a session that is no resident child may not report
    let notAChild: unknown;
    try {
      h.manager.report(h.parent, 'x');
    } catch (e) {
      notAChild = e;
    }
    expect(hasChildCode(notAChild, 'subagent-unauthorized')).toBe(true);
  });
});

/** A child step that runs until its turn is aborted. */
const untilAborted = async (req: { signal: AbortSignal }): Promise<string> => {
  await new Promise<void>((resolve) => {
    if (req.signal.aborted) resolve();
    req.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  throw new Error('aborted');
};

describe('children scenarios 40–42: interrupts, simultaneous settlements, lineage teardown', () => {
  it('40: an interrupt aborts the turn and parks queued work; the activation stays; the next delivery runs the parked work first', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    h.model.script(c1, untilAborted);
    const started = await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => h.model.requests.some((r) => r.session === c1));
    const m2 = await h.manager.followup(h.parent, c1, 'queued');
    // authority: the wrong parent is refused, the named parent is accepted
    expect(() => h.manager.interrupt(c1, { kind: 'user', parentSessionId: 'someone-else' })).toThrow(expect.objectContaining({ code: 'subagent-unauthorized' }));
    expect(h.manager.interrupt(c1, { kind: 'user', parentSessionId: h.parent.sessionId })).toBe(true);
    await child.whenIdle();
    expect(child.inbox.nextTurn.map((m) => m.id)).toEqual([m2]);
    expect(h.manager.state(c1)).toBe('running'); // m2 is accepted and unclaimed
    const m3 = await h.manager.followup(h.parent, c1, 'more');
    await until(() => h.manager.state(c1) === 'absent');
    h.nameChild(started.messageId, 'm1');
    h.nameChild(m2, 'm2');
    h.nameChild(m3, 'm3');
    expect(h.durable(child)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)', 'SPL(NT,0,[m2])', 'SE(1,1)', 'TE(1,aborted:user)',
      'SPL(NT,1,[m3])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      'TS(3)', 'SPL(NT,0,rc=1)', 'SS(3,1)', 'UM(m3)', 'AM', 'SE(3,1)', 'TE(3,completed)',
    ]);
    // interrupting an absent child is an accepted no-op
    expect(h.manager.interrupt(c1, { kind: 'user', parentSessionId: h.parent.sessionId })).toBe(false);
  });

  it('40: an interrupted child with nothing queued settles, and the parent is told it was stopped before it finished', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.model.script(c1, untilAborted);
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.model.requests.some((r) => r.session === c1));
    h.manager.interrupt(c1, { kind: 'user', parentSessionId: h.parent.sessionId });
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    const notice = h.parent.events.find((e) => e.type === 'user/message')!.data as { content: { text: string }[] };
    expect(notice.content[0]!.text).toBe(`Background subagent ${c1} was stopped before it finished.\nIt left no closing message.`);
    expect(h.parent.events.find((e) => e.type === 'subagent/end')!.data).toMatchObject({ stopReason: 'stopped', epoch: 1 });
  });

  it('40: interrupt_agent: a grandparent stops a grandchild with cause parent; a sibling and the child itself are refused', async () => {
    let manager!: ChildManager;
    const h = childSetup({ tools: [spawnTool(() => manager)] });
    manager = h.manager;
    const c1 = `${h.prefix}-c1`;
    const c2 = `${h.prefix}-c2`;
    const g = `${h.prefix}-g`;
    const c1Gate = deferred();
    h.model.script(c1, { toolCalls: [{ callId: 't1', name: 'spawn', arguments: { id: g, task: 'sub' } }] }, async () => {
      await c1Gate.promise;
      return 'c1 done';
    });
    h.model.script(g, untilAborted);
    const c2Gate = deferred();
    h.model.script(c2, { toolCalls: [{ callId: 'i1', name: 'interrupt_agent', arguments: { agent_id: g } }, { callId: 'i2', name: 'interrupt_agent', arguments: { agent_id: c2 } }] }, async () => {
      await c2Gate.promise;
      return 'c2 done';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.model.requests.some((r) => r.session === g));
    await h.manager.startContinuable(h.parent, { content: 'meddle', childSessionId: c2 });
    const sibling = h.runtime.liveAgent(c2)!;
    await until(() => sibling.events.filter((e) => e.type === 'tool/result').length === 2);
    const results = sibling.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { message: { isError?: boolean; content: { text: string }[] } }).message);
    expect(results.map((r) => [r.isError ?? false, r.content[0]!.text])).toEqual([
      [true, `subagent ${g} belongs to another parent session`],
      [true, `subagent ${c2} belongs to another parent session`],
    ]);
    expect(h.manager.state(g)).toBe('running');
    // the root (a grandparent of g) may stop it: cause `parent`
    h.model.script('parent', { toolCalls: [{ callId: 'i3', name: 'interrupt_agent', arguments: { agent_id: g } }] }, 'stopped it');
    h.parent.followup(msg('stop the grandchild'));
    await until(() => h.manager.state(g) === 'absent');
    const grandchildLog = await storedEvents(h.store, g).catch(() => []);
    const ended = (h.runtime.liveAgent(g)?.events ?? grandchildLog).filter((e) => e.type === 'turn/end');
    expect(ended.at(-1)?.data).toMatchObject({ reason: { kind: 'aborted', reason: { kind: 'parent' } } });
    c1Gate.resolve();
    c2Gate.resolve();
    await until(() => h.manager.state(c1) === 'absent' && h.manager.state(c2) === 'absent');
  });

  it('41: three children settling while the parent runs give three steers that enter one step', async () => {
    const h = childSetup();
    const parentGate = deferred();
    h.model.script('parent', waitFor(parentGate.promise));
    h.parent.followup(msg('A'));
    await until(() => h.model.requests.some((r) => r.session === 'parent'));
    const children = [1, 2, 3].map((i) => `${h.prefix}-c${i}`);
    for (const id of children) await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: id });
    await until(() => children.every((id) => h.manager.state(id) === 'absent'));
    expect(h.parent.inbox.nextStep.map((m) => m.source.kind)).toEqual(['subagent-settled', 'subagent-settled', 'subagent-settled']);
    parentGate.resolve();
    await h.parent.whenIdle();
    const steps = h.parent.events.filter((e) => e.type === 'step/start').length;
    expect(steps).toBe(2);
    const secondStep = h.parent.events.slice(h.parent.events.findLastIndex((e) => e.type === 'step/start'));
    // the three notices, in whatever order the children settled, enter the same step
    const senders = secondStep.filter((e) => e.type === 'user/message').map((e) => (e.data as { source: { senderSessionId?: string } }).source.senderSessionId);
    expect([...senders].sort()).toEqual([...children].sort());
  });

  it('42: closing a parent lineage injects the children\'s notices without waking it; its own disposal then clears them', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    const c2 = `${h.prefix}-c2`;
    h.nameChild(c1, 'C1');
    h.nameChild(c2, 'C2');
    h.model.script(c1, untilAborted);
    h.model.script(c2, untilAborted);
    await h.manager.startContinuable(h.parent, { content: 'one', childSessionId: c1 });
    await h.manager.startContinuable(h.parent, { content: 'two', childSessionId: c2 });
    await until(() => h.model.requests.filter((r) => r.session === c1 || r.session === c2).length === 2);
    await h.manager.closeLineage(h.parent);
    const notices = h.parent.events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: unknown[] }).inserted.length > 0);
    notices.forEach((e, i) => h.nameChild((e.data as { inserted: { id: string }[] }).inserted[0]!.id, `N${i + 1}`));
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'START(C2,1)', 'SPL(NS,0,[N1])', 'END(C1,1,stopped)', 'SPL(NS,1,[N2])', 'END(C2,1,stopped)', 'SPL(NS,0,rc=2,C)',
    ]);
    for (const id of [c1, c2]) {
      const log = await storedEvents(h.store, id);
      expect(log.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'aborted', reason: { kind: 'parent' } } } });
    }
  });
});
