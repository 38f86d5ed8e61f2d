import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { auditLines } from '../../../domain/audit.js';
import type { SubagentEndData } from '../../../domain/children/subagent-events.js';
import type { LogEvent } from '../../../domain/events.js';
import { enter } from '../../../runtime/hooks.js';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from '../../../runtime/ports/event-store.js';
import { StoreError } from '../../../runtime/ports/store-errors.js';
import { deferred } from '../harness.js';
import { childSetup, restartedSetup, storedEvents } from './child-harness.js';
import { until, userMessageIds } from './support.js';

/**
 * The end of a child's run always reaches its parent's log (docs/children.md, "A parent that is gone"): recorded
 * live, through the store when the parent is gone at settlement, or at the parent's next resume when both died with
 * their host. And a run that accounts for no work settles `completed`, as in the reference harness.
 */

/** Polls the store until the session's stored log satisfies `predicate`; fails after about 20 s instead of hanging. */
const untilStored = async (store: EventStore, sessionId: string, predicate: (events: LogEvent[]) => boolean): Promise<LogEvent[]> => {
  for (let i = 0; i < 10_000; i++) {
    const events = await storedEvents(store, sessionId);
    if (predicate(events)) return events;
    await new Promise<void>((r) => (i < 200 ? setImmediate(r) : setTimeout(r, 2)));
  }
  throw new Error('the stored log never satisfied the condition');
};
const hasEnd = (events: readonly LogEvent[]) => events.some((e) => e.type === 'subagent/end');
const endsOf = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'subagent/end').map((e) => e.data as SubagentEndData);
const neverAnswers = () => new Promise<string>(() => {});

describe('children: a run that accounts for no work', () => {
  it('a child whose only turn steps nothing (its pre-step hook enters no message) settles completed, as the reference does', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    // the child's pre-step hook enters nothing: hooked as its session is created, before its first step
    const create = h.runtime.createSession.bind(h.runtime);
    const hooked = deferred();
    h.runtime.createSession = (options) => {
      const agent = create(options);
      if (options?.sessionId === c1) {
        agent.on('pre-step', () => {
          hooked.resolve();
          return enter([]);
        });
      }
      return agent;
    };
    const { messageId } = await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    h.nameChild(messageId, 'm1');
    await hooked.promise;
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    expect(h.durable(await storedEvents(h.store, c1))).toEqual(['DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'TE(1,completed)']);
    const notice = h.parent.events.find((e) => e.type === 'user/message')!;
    h.nameChild((notice.data as { id: string }).id, 'n1');
    expect(h.durable(h.parent)).toEqual([
      'START(C1,1)', 'SPL(NT,0,[n1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'END(C1,1,completed)', 'SS(1,1)', 'UM(n1:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
    expect(notice.data).toMatchObject({ content: [{ type: 'text', text: `Background subagent ${c1} completed its work.\nIt left no closing message.` }] });
  });
});

describe('children: a parent that is gone when its child settles', () => {
  it('the settlement path closes the run in the parent\'s stored log (no notice); audit shows it closed; a resume adds nothing', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const gate = deferred();
    h.model.script(c1, async () => {
      await gate.promise;
      return 'finished offline';
    });
    const { messageId } = await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    h.nameChild(messageId, 'm1');
    await until(() => h.model.requests.some((r) => r.session === c1));
    await h.parent.dispose();
    gate.resolve();
    const parentLog = await untilStored(h.store, h.parent.sessionId, hasEnd);
    expect(h.manager.state(c1)).toBe('absent');
    // the parent's log: the run, closed with the data the live path would have logged; no settlement notice
    expect(h.durable(parentLog)).toEqual(['START(C1,1)', 'END(C1,1,completed)']);
    const start = parentLog.find((e) => e.type === 'subagent/start')!.data;
    expect(endsOf(parentLog)).toEqual([
      { runId: (start as { runId: string }).runId, childSessionId: c1, mode: 'continuable', epoch: 1, stopReason: 'completed', lastAssistantText: 'finished offline' },
    ]);
    expect(h.durable(await storedEvents(h.store, c1))).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
    // the audit of the stored parent: the epoch has its end and stop reason; the log (chain included) is valid
    const report = auditLines(h.parent.sessionId, parentLog.map((e) => JSON.stringify(e)));
    expect(report.ok).toBe(true);
    expect(report.children).toEqual([
      {
        childSessionId: c1,
        mode: 'continuable',
        epochs: [{ epoch: 1, runId: expect.any(String), startSeq: 1, endSeq: 2, stopReason: 'completed' }],
        reports: [],
        settlements: [],
      },
    ]);
    // the parent's next opening finds the run closed and adds nothing
    const resumed = await h.runtime.resume(h.parent.sessionId, { systemPrompt: 'parent' });
    expect(h.durable(resumed)).toEqual(['START(C1,1)', 'END(C1,1,completed)']);
  });

  it('a one-shot child whose parent is disposed while it runs: its run is closed in the parent\'s stored log', async () => {
    const h = childSetup();
    const o = `${h.prefix}-o`;
    h.nameChild(o, 'O');
    const gate = deferred();
    h.model.script(o, async () => {
      await gate.promise;
      return 'one result';
    });
    const result = h.manager.start(h.parent, { content: 'one thing', childSessionId: o });
    await until(() => h.model.requests.some((r) => r.session === o));
    await h.parent.dispose();
    gate.resolve();
    expect(await result).toMatchObject({ stopReason: 'completed', text: 'one result' });
    const parentLog = await storedEvents(h.store, h.parent.sessionId);
    expect(h.durable(parentLog)).toEqual(['START(O,1)', 'END(O,1,completed)']);
    expect(endsOf(parentLog)[0]).toMatchObject({ mode: 'one-shot', lastAssistantText: 'one result' });
  });

  it('a parent resumed while its child still runs: the run stays open until the child settles into the resumed parent', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    const gate = deferred();
    h.model.script(c1, async () => {
      await gate.promise;
      return 'finished later';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.model.requests.some((r) => r.session === c1));
    await h.parent.dispose();
    const resumed = await h.runtime.resume(h.parent.sessionId, { systemPrompt: 'parent' });
    expect(h.durable(resumed)).toEqual(['START(C1,1)']);
    gate.resolve();
    await until(() => h.manager.state(c1) === 'absent' && resumed.events.some((e) => e.type === 'subagent/end'));
    await resumed.whenIdle();
    const notice = resumed.events.find((e) => e.type === 'user/message')!;
    h.nameChild((notice.data as { id: string }).id, 'n1');
    expect(h.durable(resumed)).toEqual([
      'START(C1,1)', 'SPL(NT,0,[n1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'END(C1,1,completed)', 'SS(1,1)', 'UM(n1:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
  });
});

describe('children: both sides gone (a host restart)', () => {
  it("the parent's resume closes the run from the child's log (a turn cut mid-step reads stopped) without writing the child; a follow-up then runs epoch 2", async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.model.script(c1, neverAnswers);
    const { messageId } = await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => h.model.requests.some((r) => r.session === c1));
    await child.checkpoint();
    await h.parent.checkpoint();
    const childBefore = await storedEvents(h.store, c1);
    // the host dies: nothing is disposed; a new runtime over the same store resumes the parent
    const r = await restartedSetup(h.store, h.model, h.parent.sessionId);
    r.nameChild(c1, 'C1');
    r.nameChild(messageId, 'm1');
    expect(r.durable(r.parent)).toEqual(['START(C1,1)', 'END(C1,1,stopped)']);
    const [end] = endsOf(r.parent.events);
    expect(end).toEqual({ runId: expect.any(String), childSessionId: c1, mode: 'continuable', epoch: 1, stopReason: 'stopped' });
    // durable, and the child's log untouched: reading it to close the run writes nothing
    await r.parent.checkpoint();
    expect(r.durable(await storedEvents(h.store, h.parent.sessionId))).toEqual(['START(C1,1)', 'END(C1,1,stopped)']);
    expect(await storedEvents(h.store, c1)).toEqual(childBefore);
    expect(r.durable(childBefore)).toEqual(['DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)']);
    const report = auditLines(h.parent.sessionId, (await storedEvents(h.store, h.parent.sessionId)).map((e) => JSON.stringify(e)));
    expect(report.children![0]!.epochs).toEqual([{ epoch: 1, runId: end!.runId, startSeq: 1, endSeq: 2, stopReason: 'stopped' }]);

    // a follow-up cold-resumes the child (its crash repair is epoch 2's first events) and that epoch settles live
    h.model.script(c1, 'second epoch done');
    const m2 = await r.manager.followup(r.parent, c1, 'again');
    r.nameChild(m2, 'm2');
    const resumedChild = r.runtime.liveAgent(c1)!;
    await until(() => r.manager.state(c1) === 'absent');
    await r.parent.whenIdle();
    expect(r.durable(resumedChild)).toEqual([
      'DESC(continuable)', 'SPL(NT,0,[m1])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(m1)',
      'SE(1,1)', 'TE(1,interrupted)', 'SPL(NT,0,[m2])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(m2)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    r.nameChild(userMessageIds(r.parent)[0]!, 'n2');
    expect(r.durable(r.parent)).toEqual([
      'START(C1,1)', 'END(C1,1,stopped)',
      'START(C1,2)', 'SPL(NT,0,[n2])', 'TS(1)', 'SPL(NT,0,rc=1)', 'END(C1,2,completed)', 'SS(1,1)', 'UM(n2:subagent-settled)', 'AM', 'SE(1,1)', 'TE(1,completed)',
    ]);
    const starts = r.parent.events.filter((e) => e.type === 'subagent/start').map((e) => e.data);
    expect(starts[1]).toMatchObject({ epoch: 2, childSeq: childBefore.length });
  });

  it('a child whose log is gone: the parent\'s resume closes its run abnormal', async () => {
    const h = childSetup();
    const parent = h.parent.sessionId;
    // a parent log that names a child the store never held (a store restored without it)
    h.parent.recordChildEvent('subagent/start', { runId: 'run-x', childSessionId: `${h.prefix}-missing`, mode: 'continuable', epoch: 1, childSeq: 0 });
    await h.parent.checkpoint();
    await h.parent.dispose();
    const resumed = await h.runtime.resume(parent, { systemPrompt: 'parent' });
    expect(endsOf(resumed.events)).toEqual([{ runId: 'run-x', childSessionId: `${h.prefix}-missing`, mode: 'continuable', epoch: 1, stopReason: 'abnormal' }]);
  });
});

describe('Runtime.closeChildRun', () => {
  it('records the end once: in the live parent, else through the store; a run already closed is left alone', async () => {
    const h = childSetup();
    const parent = h.parent.sessionId;
    const start = { runId: 'run-1', childSessionId: 'kid', mode: 'continuable' as const, epoch: 1, childSeq: 0 };
    const end: SubagentEndData = { runId: 'run-1', childSessionId: 'kid', mode: 'continuable', epoch: 1, stopReason: 'completed' };
    h.parent.recordChildEvent('subagent/start', start);
    expect(await h.runtime.closeChildRun(parent, end)).toBe('live');
    expect(await h.runtime.closeChildRun(parent, end)).toBe('closed-already');
    h.parent.recordChildEvent('subagent/start', { ...start, runId: 'run-2', epoch: 2 });
    await h.parent.checkpoint();
    await h.parent.dispose();
    const end2 = { ...end, runId: 'run-2', epoch: 2 };
    expect(await h.runtime.closeChildRun(parent, end2)).toBe('stored');
    expect(await h.runtime.closeChildRun(parent, end2)).toBe('closed-already');
    expect(h.durable(await storedEvents(h.store, parent))).toEqual(['START(kid,1)', 'END(kid,1,completed)', 'START(kid,2)', 'END(kid,2,completed)']);
  });
});

/** A memory store whose appends to the streams in `failing` fail (nothing written). */
class StreamFailingStore extends MemoryEventStore {
  readonly failing = new Set<string>();
  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.failing.has(stream)) throw new StoreError('store-io', 'injected write failure');
    return super.append(stream, events, expected);
  }
}

describe('children: where steerlog differs from the reference (docs/children.md)', () => {
  it('a teardown that fails (the child\'s last events cannot be flushed) leaves the outcome to the epoch\'s log: completed, with its closing message', async () => {
    // the reference reports such an epoch `error` ("failed before it finished.") and withholds its closing message
    const store = new StreamFailingStore();
    const h = childSetup({ store });
    const c1 = `${h.prefix}-c1`;
    h.nameChild(c1, 'C1');
    h.model.script(c1, () => {
      store.failing.add(c1); // from the answer on, nothing the child writes reaches the store
      return 'answer never flushed';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    expect(h.durable(h.parent).filter((d) => d.startsWith('START') || d.startsWith('END'))).toEqual(['START(C1,1)', 'END(C1,1,completed)']);
    expect(endsOf(h.parent.events)[0]).toMatchObject({ stopReason: 'completed', lastAssistantText: 'answer never flushed' });
    const notice = h.parent.events.find((e) => e.type === 'user/message')!;
    expect(notice.data).toMatchObject({ content: [{ type: 'text', text: `Background subagent ${c1} completed its work.\nIts closing message:\nanswer never flushed` }] });
    // the child's stored log indeed lacks the end of its turn
    expect((await storedEvents(store, c1)).some((e) => e.type === 'turn/end')).toBe(false);
  });
});

/** A memory store that counts the appends to `watched` and holds each until `gate` opens. */
class GatedStore extends MemoryEventStore {
  watched = '';
  appends = 0;
  gate = deferred();
  override async append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (stream === this.watched) {
      this.appends++;
      await this.gate.promise;
    }
    return super.append(stream, events, expected);
  }
}

describe('children: two resumes of the same parent at once', () => {
  it('the one refused (session-live) writes nothing to the stream: one writer, one end of the run', async () => {
    const store = new GatedStore();
    const h = childSetup({ store });
    const parent = h.parent.sessionId;
    h.parent.recordChildEvent('subagent/start', { runId: 'run-x', childSessionId: `${h.prefix}-missing`, mode: 'continuable', epoch: 1, childSeq: 0 });
    store.gate.resolve();
    await h.parent.checkpoint();
    await h.parent.dispose();
    // the winner's write of the run's end is held, so the second resume reads the run still open
    store.watched = parent;
    store.gate = deferred();
    const first = h.runtime.resume(parent, { systemPrompt: 'parent' });
    const second = h.runtime.resume(parent, { systemPrompt: 'parent' });
    const winner = await first;
    expect(await second.then(() => 'resumed', (e: { code?: string }) => e.code)).toBe('session-live');
    // give a write-behind the refused resume might have started (its batch delay is 5 ms) every chance to reach the store
    for (let i = 0; i < 100 && store.appends < 2; i++) await new Promise<void>((r) => setTimeout(r, 2));
    store.gate.resolve();
    await winner.checkpoint();
    expect(store.appends).toBe(1);
    const stored = await storedEvents(store, parent);
    expect(endsOf(stored)).toHaveLength(1);
    expect(stored.map((e) => e.id)).toEqual(winner.events.map((e) => e.id));
  });
});
