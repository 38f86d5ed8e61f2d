import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AssistantMessageData, LogEvent, ToolCallData, ToolResultData, TurnEndReason } from '../../domain/events.js';
import type { ScriptedResponse } from '../../adapters/model/scripted/scripted-model.js';
import type { Agent } from '../../runtime/agent.js';
import type { LateToolResults } from '../../runtime/tool-runner.js';
import type { Tool } from '../../runtime/tools.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { expectConsistent, setup, tick } from './harness.js';

/** Runs per property (a few seconds on memory and on PostgreSQL); raise with STEERLOG_TOOLS_PROPERTY_RUNS. */
const RUNS = Number(process.env.STEERLOG_TOOLS_PROPERTY_RUNS ?? 60);

/** One tool call of a model step and what its body does. */
interface CallSpec {
  readonly parallel: boolean;
  /** Macrotasks the body takes (different finishing orders). */
  readonly ticks: number;
  readonly throws: boolean;
  readonly contexts: number;
  readonly concludes: boolean;
  /** The body aborts its own turn before it returns. */
  readonly cancels: boolean;
  /** The body watches its signal and throws an AbortError once aborted. */
  readonly honorsSignal: boolean;
}
interface Program {
  /** Per model request: the tool calls it makes (an empty list answers text). */
  readonly steps: readonly (readonly CallSpec[])[];
  readonly concurrency: number;
  readonly late: LateToolResults;
  /** Abort the turn from outside after this many macrotasks (null: never). */
  readonly abortAfter: number | null;
  readonly keepInbox: boolean;
  /** The log refuses the first tool/result of this call once (a step failure), if the call exists. */
  readonly refuse: { readonly step: number; readonly call: number } | null;
}

const callSpec: fc.Arbitrary<CallSpec> = fc.record({
  parallel: fc.boolean(),
  ticks: fc.nat({ max: 4 }),
  throws: fc.boolean(),
  contexts: fc.nat({ max: 2 }),
  concludes: fc.constantFrom(false, false, true),
  cancels: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  honorsSignal: fc.boolean(),
});
const program: fc.Arbitrary<Program> = fc.record({
  steps: fc.array(fc.array(callSpec, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 }),
  concurrency: fc.integer({ min: 1, max: 4 }),
  late: fc.constantFrom<LateToolResults>('withhold', 'keep'),
  abortAfter: fc.option(fc.nat({ max: 25 }), { nil: null, freq: 2 }),
  keepInbox: fc.boolean(),
  refuse: fc.option(fc.record({ step: fc.nat({ max: 2 }), call: fc.nat({ max: 4 }) }), { nil: null, freq: 3 }),
});

interface Body {
  readonly callId: string;
  readonly turn: number;
  readonly step: number;
  /** Log length when the body started and when it settled; whether the turn was aborted when it settled. */
  readonly startLen: number;
  endLen: number;
  abortedAtEnd: boolean;
}

const run = async (p: Program) => {
  const specs = new Map<string, CallSpec>();
  let request = 0;
  const bodies = new Map<string, Body>();
  const active = new Set<string>();
  const violations: string[] = [];
  /** Log length when the turn was aborted. */
  let abortedAt = Infinity;

  const execute: Tool<Agent>['execute'] = async (_args, c) => {
    const spec = specs.get(c.callId)!;
    const body: Body = { callId: c.callId, turn: c.turn, step: c.step, startLen: c.agent.events.length, endLen: -1, abortedAtEnd: false };
    bodies.set(c.callId, body);
    active.add(c.callId);
    try {
      for (let i = 0; i < spec.ticks; i++) {
        await tick();
        if (spec.honorsSignal && c.signal.aborted) throw Object.assign(new Error('stopped'), { name: 'AbortError' });
      }
      if (spec.cancels) c.agent.cancel({ kind: 'user' }, { keepInbox: p.keepInbox });
      if (spec.throws) throw new Error(`boom ${c.callId}`);
      return {
        content: `out ${c.callId}`,
        ...(spec.contexts ? { additionalContexts: Array.from({ length: spec.contexts }, (_, j) => ctx(`${c.callId}-k${j}`)) } : {}),
        ...(spec.concludes ? { concludesTurn: true } : {}),
      };
    } finally {
      active.delete(c.callId);
      body.endLen = c.agent.events.length;
      body.abortedAtEnd = c.signal.aborted;
    }
  };
  const h = setup({
    whenExhausted: (req): ScriptedResponse => {
      if (request === 0) req.signal.addEventListener('abort', () => (abortedAt = h.agent.events.length));
      const r = request++;
      const calls = p.steps[r];
      if (!calls) return { text: 'done' };
      calls.forEach((s, i) => specs.set(`r${r}c${i}`, s));
      return { toolCalls: calls.map((s, i) => ({ callId: `r${r}c${i}`, name: s.parallel ? 'par' : 'ex' })) };
    },
    tools: [
      { name: 'par', parallel: true, execute },
      { name: 'ex', execute },
    ],
    toolOptions: { toolConcurrency: p.concurrency, lateToolResults: p.late },
  });
  const refuseId = p.refuse ? `r${p.refuse.step}c${p.refuse.call}` : null;
  let refused = false;
  h.agent.addCommitCheck((type, data) => {
    if (type === 'tool/result' && !refused && (data as ToolResultData).message.callId === refuseId) {
      refused = true;
      throw new Error('result refused');
    }
  });
  h.agent.onEvent((e) => {
    if (e.type === 'step/end' && active.size > 0) violations.push(`step/end at seq ${e.seq} while ${[...active].join(',')} ran`);
  });
  h.agent.followup(msg('go'));
  if (p.abortAfter !== null) {
    for (let i = 0; i < p.abortAfter && h.agent.status === 'running'; i++) await tick();
    h.agent.cancel({ kind: 'user' }, { keepInbox: p.keepInbox });
  }
  await h.agent.whenIdle();
  return { h, bodies, violations, specs, abortedAt, refused: refused ? refuseId : null };
};

/** The events of one step, by (turn, step). */
const stepEvents = (events: readonly LogEvent[], turn: number, step: number): { events: LogEvent[]; end: number } => {
  const start = events.findIndex((e) => e.type === 'step/start' && (e.data as { turn: number; step: number }).turn === turn && (e.data as { step: number }).step === step);
  const end = events.findIndex((e, i) => i > start && e.type === 'step/end');
  return { events: events.slice(start, end + 1), end };
};

describe('tool properties', () => {
  it('random parallel tool mixes: results in model order, one call/result pair per call, no body outlives its step, audit agrees', async () => {
    await fc.assert(
      fc.asyncProperty(program, async (p) => {
        const { h, bodies, violations, specs, abortedAt, refused } = await run(p);
        const events = h.agent.events;
        expect(violations).toEqual([]);
        const turnEnd = events.find((e) => e.type === 'turn/end')!.data as { reason: TurnEndReason };
        const aborted = turnEnd.reason.kind === 'aborted';
        if (!aborted) expect(turnEnd.reason.kind).toBe(refused ? 'error' : 'completed');

        const staged = new Set<string>();
        const expectedStaged = new Set<string>();
        for (const e of events) {
          if (e.type === 'agent/inbox/spliced' && (e.data as { target: string }).target === 'next-step') {
            for (const m of (e.data as { inserted: { id: string }[] }).inserted) staged.add(m.id);
          }
        }
        const answers = events.filter((e) => e.type === 'assistant/message' && !(e.data as AssistantMessageData).interrupted);
        for (const am of answers) {
          const { turn, step, message } = am.data as AssistantMessageData;
          const order = message.content.flatMap((b) => (b.type === 'tool-call' ? [b.callId] : []));
          const { events: inStep, end } = stepEvents(events, turn, step);
          expect(end, `step ${turn}.${step} closed`).toBeGreaterThan(0);
          const tcs = inStep.filter((e) => e.type === 'tool/call').map((e) => (e.data as ToolCallData).callId);
          const trs = inStep.filter((e) => e.type === 'tool/result').map((e) => e.data as ToolResultData);
          // one call and one result per call, both in model order, each result after its call
          expect(tcs).toEqual(order);
          expect(trs.map((r) => r.message.callId)).toEqual(order);
          for (const id of order) {
            const tc = inStep.findIndex((e) => e.type === 'tool/call' && (e.data as ToolCallData).callId === id);
            const tr = inStep.findIndex((e) => e.type === 'tool/result' && (e.data as ToolResultData).message.callId === id);
            expect(tr).toBeGreaterThan(tc);
          }
          let concluded = false;
          let stagedHere = false;
          for (const r of trs) {
            const id = r.message.callId;
            const spec = specs.get(id)!;
            const body = bodies.get(id);
            if (id === refused) {
              // the call whose result the log refused: a STEP_FAILED result in its place
              expect(r.error).toEqual({ name: 'StepFailed', code: 'STEP_FAILED' });
              continue;
            }
            if (!body) {
              // never ran: only after an abort (a synthetic abort result) or a step failure (STEP_FAILED)
              if (r.error?.code === 'STEP_FAILED') expect(refused).not.toBeNull();
              else {
                expect(aborted).toBe(true);
                expect(r.error).toEqual({ name: 'AbortError', code: 'ABORTED_BEFORE_DISPATCH' });
              }
              // dispatched before the abort (stopped before its body), or a synthetic pair: result right after call
              const tc = inStep.findIndex((e) => e.type === 'tool/call' && (e.data as ToolCallData).callId === id);
              if (inStep[tc]!.seq >= abortedAt || r.error?.code === 'STEP_FAILED') expect(inStep[tc + 1]).toMatchObject({ type: 'tool/result', data: { message: { callId: id } } });
              continue;
            }
            // the body ran inside its step, after its tool/call
            expect([body.turn, body.step]).toEqual([turn, step]);
            expect(body.endLen).toBeLessThanOrEqual(end);
            const tcSeq = events.findIndex((e) => e.type === 'tool/call' && (e.data as ToolCallData).callId === id);
            expect(body.startLen).toBeGreaterThan(tcSeq);
            if (body.abortedAtEnd && p.late === 'withhold') {
              expect(r.error).toEqual({ name: 'AbortError', code: 'ABORTED' });
              expect(r.meta).toHaveProperty('withheld');
              continue;
            }
            if (body.abortedAtEnd) expect(r.meta).toEqual({ settledAfterAbort: true });
            else expect(r).not.toHaveProperty('meta');
            const threw = spec.throws || (spec.honorsSignal && body.abortedAtEnd && r.error?.name === 'AbortError');
            if (threw) expect(r.error?.code).toBe('TOOL_FAILED');
            else {
              expect(r).not.toHaveProperty('error');
              if (spec.concludes) concluded = true;
              for (let j = 0; j < spec.contexts; j++) expectedStaged.add(`${id}-k${j}`);
              if (spec.contexts > 0) stagedHere = true;
            }
          }
          // a text answer ends the turn; a tool step continues it unless a result concluded it and nothing was staged
          const nextStep = events.some((e) => e.type === 'step/start' && (e.data as { turn: number; step: number }).turn === turn && (e.data as { step: number }).step === step + 1);
          if (refused !== null && order.includes(refused)) expect(nextStep).toBe(false);
          else if (!aborted) expect(nextStep).toBe(order.length > 0 && (!concluded || stagedHere));
        }
        // contexts are staged exactly for committed, non-withheld results
        expect([...staged].sort()).toEqual([...expectedStaged].sort());
        expect(h.agent.status).toBe('idle');
        // a refused tool/result is the test store's fault, which the log does not hold: the replay cannot reproduce it.
        // Known replay divergences (reported, not fixed yet): parallel calls that settle out of model order (the log
        // keeps results in model order only), and outcomes settled around an abort from outside (timing-dependent)
        const unchecked =
          refused !== null
            ? 'the test store refused a write'
            : p.concurrency > 1 && p.steps.some((s) => s.filter((c) => c.parallel).length > 1)
              ? 'known replay divergence: parallel calls settled out of order'
              : p.abortAfter !== null
                ? 'known replay divergence: outcomes around an outside abort'
                : null;
        await expectConsistent(h, unchecked !== null ? { unchecked } : undefined);
      }),
      { numRuns: RUNS },
    );
  });
});
