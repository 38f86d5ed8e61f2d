import { describe, expect, it, vi } from 'vitest';
import type { ToolResultData } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import type { ModelRequest } from '../../runtime/ports/model.js';
import type { Tool, ToolOutcome } from '../../runtime/tools.js';
import { FaultyStore } from '../support/faulty-store.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { deferred, expectConsistent, ids, setup, tick } from './harness.js';

const A = msg('A');
const tool = (name: string, execute: Tool<Agent>['execute'], parallel = false): Tool<Agent> => ({ name, execute, ...(parallel ? { parallel } : {}) });
const calls = (...names: string[]) => ({ toolCalls: names.map((n) => ({ callId: n, name: n })) });
const results = (agent: Agent) => agent.events.filter((e) => e.type === 'tool/result').map((e) => e.data as ToolResultData);
const resultOf = (agent: Agent, callId: string) => results(agent).find((r) => r.message.callId === callId)!;
const textOf = (r: ToolResultData) => r.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
/** The durable events from the first assistant message on. */
const fromAM = (d: string[]) => d.slice(d.indexOf('AM'));

/** A tool body that signals when it starts and settles only when `gate` opens. */
const gated = (outcome: ToolOutcome) => {
  const started = deferred();
  const gate = deferred();
  let ended = -1;
  const execute: Tool<Agent>['execute'] = async (_a, c) => {
    started.resolve();
    await gate.promise;
    ended = c.agent.events.length;
    return outcome;
  };
  return { started, gate, execute, ended: () => ended };
};

describe('tools and interruption: an interrupted stream keeps what it assembled', () => {
  it('an abort mid-stream keeps every assembled block in order, reasoning included', async () => {
    const streaming = deferred<ModelRequest>();
    const h = setup({
      script: [
        (req) =>
          new Promise<never>((_, fail) => {
            for (const [type, text] of [['reasoning', 'think '], ['reasoning', 'hard'], ['text', 'Hel'], ['text', 'lo'], ['text', ''], ['reasoning', 'again']] as const) {
              req.onChunk({ type, text });
            }
            streaming.resolve(req);
            req.signal.addEventListener('abort', () => fail(new Error('stream aborted')));
          }),
      ],
    });
    h.agent.followup(A);
    await streaming.promise;
    h.agent.cancel({ kind: 'user' });
    await h.agent.whenIdle();
    expect(h.durable().slice(3)).toEqual(['SS(1,1)', 'UM(A)', 'CH', 'CH', 'CH', 'CH', 'CH', 'CH', 'AM!', 'SE(1,1)', 'TE(1,aborted:user)']);
    const am = h.agent.events.find((e) => e.type === 'assistant/message')!.data;
    expect(am).toMatchObject({
      interrupted: true,
      message: { role: 'assistant', content: [{ type: 'reasoning', text: 'think hard' }, { type: 'text', text: 'Hello' }, { type: 'reasoning', text: 'again' }] },
    });
    await expectConsistent(h);
  });

  it('an abort after reasoning only keeps the reasoning as an interrupted message (scripted reasoning deltas)', async () => {
    const h = setup({ script: [{ chunks: [{ type: 'reasoning', text: 'let me ' }, { type: 'reasoning', text: 'see' }, 'never streamed'], text: 'x' }] });
    let chunks = 0;
    h.agent.onEvent((e) => {
      if (e.type === 'assistant/chunk' && ++chunks === 2) h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable().slice(3)).toEqual(['SS(1,1)', 'UM(A)', 'CH', 'CH', 'AM!', 'SE(1,1)', 'TE(1,aborted:user)']);
    const am = h.agent.events.find((e) => e.type === 'assistant/message')!.data;
    expect(am).toMatchObject({ interrupted: true, message: { content: [{ type: 'reasoning', text: 'let me see' }] } });
    await expectConsistent(h);
  });

  it('a completed answer keeps its reasoning block before the text', async () => {
    const h = setup({ script: [{ reasoning: 'because', text: 'answer', chunks: [{ type: 'reasoning', text: 'because' }, 'answer'] }] });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable().slice(3)).toEqual(['SS(1,1)', 'UM(A)', 'CH', 'CH', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    const am = h.agent.events.find((e) => e.type === 'assistant/message')!.data;
    expect(am).toMatchObject({ message: { content: [{ type: 'reasoning', text: 'because' }, { type: 'text', text: 'answer' }] } });
    expect(am).not.toHaveProperty('interrupted');
    await expectConsistent(h);
  });
});

describe('tools and interruption: calls on abort', () => {
  it('calls that never started get a synthetic call + result pair each, pair by pair in model order', async () => {
    const slow = gated({ content: 'slow' });
    const h = setup({
      script: [calls('p1', 'x', 'p2')],
      tools: [tool('p1', slow.execute, true), tool('x', () => ({ content: 'never' })), tool('p2', () => ({ content: 'never' }), true)],
    });
    h.agent.followup(A);
    await slow.started.promise;
    h.agent.cancel({ kind: 'user' });
    slow.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(p1)', 'TR(p1)', 'TC(x)', 'TR(x)', 'TC(p2)', 'TR(p2)', 'SE(1,1)', 'TE(1,aborted:user)']);
    for (const id of ['x', 'p2']) {
      expect(resultOf(h.agent, id)).toMatchObject({ message: { isError: true }, error: { name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' } });
    }
    await expectConsistent(h);
  });

  it('a started call that settles after the abort: the model sees ABORTED, the log keeps the outcome, its contexts are not staged', async () => {
    const slow = gated({ content: 'late', additionalContexts: [ctx('K')], concludesTurn: true });
    const fastRan = deferred();
    const h = setup({
      script: [calls('slow', 'fast')],
      tools: [tool('slow', slow.execute, true), tool('fast', () => (fastRan.resolve(), { content: 'early', additionalContexts: [ctx('E')] }), true)],
    });
    h.agent.followup(A);
    await slow.started.promise;
    await fastRan.promise;
    await tick(); // fast has settled before the abort; its result waits for slow's (model order)
    h.agent.cancel({ kind: 'user' });
    slow.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(slow)', 'TC(fast)', 'TR(slow)', 'TR(fast)', 'SPL(NS,0,[E])', 'SE(1,1)', 'TE(1,aborted:user)']);
    const late = resultOf(h.agent, 'slow');
    expect(late).toMatchObject({
      message: { isError: true },
      error: { name: 'AbortError', code: 'ABORTED' },
      meta: { withheld: { content: [{ type: 'text', text: 'late' }], additionalContexts: [{ id: 'K' }], concludesTurn: true } },
    });
    expect(textOf(late)).not.toContain('late');
    expect(resultOf(h.agent, 'fast')).toMatchObject({ message: { content: [{ type: 'text', text: 'early' }] } });
    expect(resultOf(h.agent, 'fast')).not.toHaveProperty('error');
    expect(ids(h.agent.inbox.nextStep)).toEqual(['E']); // parked: the aborted turn's driver stopped
    expect(slow.ended()).toBeLessThan(h.agent.events.findIndex((e) => e.type === 'step/end'));
    // fast's outcome settled before the abort and was committed after slow's (model order): the replay settles it before its cancel
    await expectConsistent(h);
  });

  it('with lateToolResults "keep", the late outcome commits as returned, marked, and its contexts are parked', async () => {
    const slow = gated({ content: 'late', additionalContexts: [ctx('K')] });
    const fastRan = deferred();
    const h = setup({
      script: [calls('slow', 'fast')],
      tools: [tool('slow', slow.execute, true), tool('fast', () => (fastRan.resolve(), { content: 'early', additionalContexts: [ctx('E')] }), true)],
      toolOptions: { lateToolResults: 'keep' },
    });
    h.agent.followup(A);
    await slow.started.promise;
    await fastRan.promise;
    await tick();
    h.agent.cancel({ kind: 'user' });
    slow.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(slow)', 'TC(fast)', 'TR(slow)', 'SPL(NS,0,[K])', 'TR(fast)', 'SPL(NS,1,[E])', 'SE(1,1)', 'TE(1,aborted:user)']);
    expect(resultOf(h.agent, 'slow')).toMatchObject({ message: { content: [{ type: 'text', text: 'late' }] }, meta: { settledAfterAbort: true } });
    expect(resultOf(h.agent, 'slow')).not.toHaveProperty('error');
    expect(resultOf(h.agent, 'fast')).not.toHaveProperty('meta');
    expect(ids(h.agent.inbox.nextStep)).toEqual(['K', 'E']);
    // as above: fast's outcome, settled before the abort, is settled before the replay's cancel
    await expectConsistent(h);
  });

  it('a tool that aborts its own turn: its outcome is withheld, the rest get synthetic pairs', async () => {
    const h = setup({
      script: [calls('stop', 'after')],
      tools: [tool('stop', (_a, c) => (c.agent.cancel({ kind: 'hook', reason: 'enough' }), { content: 'stopped' })), tool('after', () => ({ content: 'never' }))],
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(stop)', 'TR(stop)', 'TC(after)', 'TR(after)', 'SE(1,1)', 'TE(1,aborted:hook)']);
    expect(results(h.agent).map((r) => r.error?.code)).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH']);
    await expectConsistent(h);
  });

  it('parallel calls that returned just before another one aborts the turn commit as returned; only the aborting one is withheld', async () => {
    // all three start in one burst; 'a' and 'b' return before 'stop' cancels, but the runner resumes on them after
    const h = setup({
      script: [calls('a', 'b', 'stop')],
      tools: [
        tool('a', () => ({ content: 'from a' }), true),
        tool('b', () => ({ content: 'from b' }), true),
        tool('stop', (_a, c) => (c.agent.cancel({ kind: 'hook', reason: 'enough' }), { content: 'stopped' }), true),
      ],
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(a)', 'TC(b)', 'TC(stop)', 'TR(a)', 'TR(b)', 'TR(stop)', 'SE(1,1)', 'TE(1,aborted:hook)']);
    const rs = results(h.agent);
    expect(rs.map((r) => r.error?.code ?? null)).toEqual([null, null, 'ABORTED']);
    expect(rs.map((r) => r.meta ?? null)).toEqual([null, null, { withheld: { content: [{ type: 'text', text: 'stopped' }] } }]);
    await expectConsistent(h);
  });
});

describe('tools and interruption: a step failure drains running calls first', () => {
  it('the log refusing a result while a parallel call runs: the step waits for it, every call gets one pair, its steer is parked', async () => {
    const slow = gated({ content: 'slow done' });
    // the check's state is kept per agent, so the replay check's agent runs it afresh
    const vetoed = new WeakSet<object>();
    const refused = deferred();
    const h = setup({
      script: [calls('fast', 'slow', 'x')],
      tools: [
        tool('fast', () => ({ content: 'fast' }), true),
        tool('slow', async (a, c) => {
          const out = await slow.execute(a, c);
          c.agent.steer(msg('S')); // a later effect of the running call: must land inside its step
          return out;
        }, true),
        tool('x', () => ({ content: 'never' })),
      ],
    });
    const agent = h.agent;
    h.agent.addCommitCheck((type, data) => {
      if (type === 'tool/result' && (data as ToolResultData).message.callId === 'fast' && !vetoed.has(agent)) {
        vetoed.add(agent);
        refused.resolve();
        throw new Error('result refused');
      }
    });
    h.agent.followup(A);
    await slow.started.promise;
    await refused.promise;
    for (let i = 0; i < 3; i++) await tick();
    // the failure happened, but the step stays open while slow runs
    expect(h.durable()).not.toContain('SE(1,1)');
    expect(h.agent.status).toBe('running');
    slow.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(fast)', 'TC(slow)', 'TR(fast)', 'SPL(NS,0,[S])', 'TR(slow)', 'TC(x)', 'TR(x)', 'SE(1,1)', 'TE(1,error:UNKNOWN)']);
    expect(results(h.agent).map((r) => r.error?.code)).toEqual(['STEP_FAILED', undefined, 'STEP_FAILED']);
    expect(textOf(resultOf(h.agent, 'fast'))).toContain('result refused');
    expect(textOf(resultOf(h.agent, 'slow'))).toBe('slow done');
    expect(h.live).toContain('error 1.1 UNKNOWN');
    expect(ids(h.agent.inbox.nextStep)).toEqual(['S']); // parked by the failed turn, which accounts for it
    expect(slow.ended()).toBeLessThan(h.agent.events.findIndex((e) => e.type === 'step/end'));
    // the refusal is the deployment's commit check: the replay check installs it with the hooks, and it refuses again
    await expectConsistent(h);
  });
  it('a failed checkpoint before a body while another call runs: that call never runs, the running one drains first', async () => {
    const store = new FaultyStore();
    const [p0, p1] = [gated({ content: '0' }), gated({ content: '1' })];
    let p2Ran = false;
    const h = setup({
      store,
      script: [calls('p0', 'p1', 'p2')],
      tools: [tool('p0', p0.execute, true), tool('p1', p1.execute, true), tool('p2', () => ((p2Ran = true), { content: '2' }), true)],
      toolOptions: { toolConcurrency: 2 },
    });
    h.agent.followup(A);
    await Promise.all([p0.started.promise, p1.started.promise]);
    store.failNext('fail'); // the checkpoint before p2's body fails
    p0.gate.resolve();
    await vi.waitFor(() => expect(store.calls.at(-1)?.outcome).toBe('failed'), { timeout: 10_000, interval: 2 });
    for (let i = 0; i < 3; i++) await tick();
    expect(h.durable()).not.toContain('SE(1,1)'); // p1 still runs: the step stays open
    p1.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(p0)', 'TC(p1)', 'TR(p0)', 'TC(p2)', 'TR(p1)', 'TR(p2)', 'SE(1,1)', 'TE(1,error:UNKNOWN)']);
    expect(results(h.agent).map((r) => r.error?.code)).toEqual([undefined, undefined, 'STEP_FAILED']);
    expect(textOf(resultOf(h.agent, 'p2'))).toContain('checkpoint');
    expect(p2Ran).toBe(false);
    expect(p1.ended()).toBeLessThan(h.agent.events.findIndex((e) => e.type === 'step/end'));
    // the log shows the failed checkpoint (p2's STEP_FAILED result names it): the replay's store fails it again
    await expectConsistent(h);
  });
});

describe('tools and interruption: payloads and the order of tool events', () => {
  it('a thrown tool error gives isError plus the error’s name and its own code (TOOL_FAILED when it has none)', async () => {
    class RateLimited extends Error {
      readonly code = 'E_RATE';
      constructor() {
        super('slow down');
        this.name = 'RateLimited';
      }
    }
    const h = setup({
      script: [calls('typed', 'plain', 'odd'), 'ok'],
      tools: [
        tool('typed', () => {
          throw new RateLimited();
        }),
        tool('plain', () => {
          throw new Error('kaput');
        }),
        tool('odd', () => {
          throw 'a string';
        }),
      ],
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(results(h.agent).map((r) => ({ isError: r.message.isError, error: r.error, text: textOf(r) }))).toEqual([
      { isError: true, error: { name: 'RateLimited', code: 'E_RATE' }, text: 'slow down' },
      { isError: true, error: { name: 'Error', code: 'TOOL_FAILED' }, text: 'kaput' },
      { isError: true, error: { name: 'Error', code: 'TOOL_FAILED' }, text: 'a string' },
    ]);
    expect(h.durable().at(-1)).toBe('TE(1,completed)');
    await expectConsistent(h);
  });

  it('tool/call is appended as each call is dispatched; results commit in model order as soon as they and all earlier ones settled', async () => {
    const [p1, p2, p3] = [gated({ content: '1' }), gated({ content: '2' }), gated({ content: '3' })];
    const h = setup({
      script: [calls('p1', 'p2', 'p3', 'x', 'p4')],
      tools: [tool('p1', p1.execute, true), tool('p2', p2.execute, true), tool('p3', p3.execute, true), tool('x', () => ({ content: 'x' })), tool('p4', () => ({ content: '4' }), true)],
      toolOptions: { toolConcurrency: 2 },
    });
    h.agent.followup(A);
    await p2.started.promise;
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(p1)', 'TC(p2)']); // the pool is full: p3 waits
    p2.gate.resolve();
    await p3.started.promise;
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(p1)', 'TC(p2)', 'TC(p3)']); // p2 settled, but p1 comes first
    p1.gate.resolve();
    for (let i = 0; i < 3; i++) await tick();
    expect(fromAM(h.durable())).toEqual(['AM', 'TC(p1)', 'TC(p2)', 'TC(p3)', 'TR(p1)', 'TR(p2)']); // x is a barrier: waits for p3
    p3.gate.resolve();
    await h.agent.whenIdle();
    expect(fromAM(h.durable())).toEqual([
      'AM', 'TC(p1)', 'TC(p2)', 'TC(p3)', 'TR(p1)', 'TR(p2)', 'TR(p3)', 'TC(x)', 'TR(x)', 'TC(p4)', 'TR(p4)', 'SE(1,1)', 'SS(1,2)', 'AM', 'SE(1,2)', 'TE(1,completed)',
    ]);
    // p2 settled before p1 and freed the pool for p3 (the log keeps results in model order only): the replay settles the
    // latest running call when the recording dispatches another while the pool is full
    await expectConsistent(h);
  });
});
