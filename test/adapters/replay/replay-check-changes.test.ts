import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../../domain/events.js';
import { comparable } from '../../../adapters/replay/event-compare.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import type { Agent } from '../../../runtime/agent.js';
import { enter } from '../../../runtime/hooks.js';
import type { Tool } from '../../../runtime/tools.js';
import { ctx } from '../../../testing/log-builder.js';
import { randomProgram, runRandomSession, type RandomProgram } from '../../support/random-session.js';

/** The first position at which two real runs differ, compared as the replay compares (null: they are equal). */
const firstDifference = (a: readonly LogEvent[], b: readonly LogEvent[]): number | null => {
  const at = (events: readonly LogEvent[]) => new Map(events.map((e, i) => [e.id as string, i]));
  const pa = at(a);
  const pb = at(b);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (!a[i] || !b[i] || JSON.stringify(comparable(a[i]!, pa)) !== JSON.stringify(comparable(b[i]!, pb))) return i;
  }
  return null;
};

const dropSteering = (a: Agent) => a.on('pre-step', (c, next) => (c.step % 2 === 0 ? enter(c.messages.filter((m) => !m.id.startsWith('steer'))) : next()));

describe('replayCheck names the first event a change makes differ', () => {
  it('a pre-step hook taken away: the first event where a real run without it differs', async () => {
    const p: RandomProgram = { top: [{ send: 'followup' }], replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: true, systemPerTurn: false };
    const { agent } = await runRandomSession(p);
    expect(await replayCheck(agent.events, { install: dropSteering })).toEqual({ ok: true, events: agent.events.length });
    const result = await replayCheck(agent.events);
    // step 1.2 claimed the steer its tool body sent and the context it staged: the hook let only the context enter
    const stepTwo = agent.events.find((e) => e.type === 'step/start' && (e.data as { step: number }).step === 2)!;
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.divergence.seq).toBe(stepTwo.seq + 1);
    expect(result.divergence.recorded?.data).toMatchObject({ id: 'staged-c0' });
    expect(result.divergence.produced).toMatchObject({ type: 'user/message', data: { id: 'steer-1' } });
  });

  it('on random sessions: a hook taken away diverges exactly where a real run without it first differs', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, async (program) => {
        const p = { ...program, dropsOddSteering: true };
        const withHook = (await runRandomSession(p)).agent.events;
        const without = (await runRandomSession({ ...p, dropsOddSteering: false })).agent.events;
        const expected = firstDifference(withHook, without);
        const result = await replayCheck(withHook);
        if (expected === null) return void expect(result.ok).toBe(true);
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.divergence.seq).toBe(expected);
        expect(result.divergence.recorded).toEqual(withHook[expected] ?? null);
        expect(comparable(result.divergence.produced!, new Map())).toMatchObject({ type: without[expected]!.type, data: without[expected]!.data });
      }),
      { numRuns: 15 },
    );
  });

  it('a changed tool: the tool/result of its first call', async () => {
    const p: RandomProgram = { top: [{ send: 'followup' }, { send: 'steer' }], replies: ['tool', 'text'], inner: [], dropsOddSteering: false, systemPerTurn: true };
    const { agent } = await runRandomSession(p);
    const act = (text: (callId: string) => string): Tool<Agent> => ({
      name: 'act',
      description: 'Acts.',
      execute: (_a, c) => ({ content: text(c.callId), additionalContexts: [ctx(`staged-${c.callId}`)] }),
    });
    // the tool's code as it ran: the check passes running it instead of answering from the recording
    expect(await replayCheck(agent.events, { tools: [act((id) => `acted ${id}`)] })).toEqual({ ok: true, events: agent.events.length });
    const result = await replayCheck(agent.events, { tools: [act((id) => `acted on ${id}`)] });
    const firstResult = agent.events.find((e) => e.type === 'tool/result')!;
    expect(result).toMatchObject({ ok: false, divergence: { seq: firstResult.seq, type: 'tool/result', recorded: firstResult } });
    if (!result.ok) expect(result.divergence.produced?.data).toMatchObject({ message: { callId: 'c0', content: [{ type: 'text', text: 'acted on c0' }] } });
  });

  it('a recorded tool outcome edited (its staged context no longer its own): the staged splice, where the runtime ends the step', async () => {
    const p: RandomProgram = { top: [{ send: 'followup' }], replies: ['tool', 'text'], inner: [], dropsOddSteering: false, systemPerTurn: false };
    const { agent } = await runRandomSession(p);
    // the outcome now says the tool staged no context: the runtime then stages none, and the log's splice is missing
    const result = agent.events.findIndex((e) => e.type === 'tool/result');
    const edited = agent.events.map((e, i) => (i === result + 1 ? { ...e, metadata: { ...e.metadata, causationId: 'elsewhere' } } : e)) as LogEvent[];
    const check = await replayCheck(edited);
    expect(check).toMatchObject({ ok: false, divergence: { seq: result + 1, type: 'agent/inbox/spliced', recorded: edited[result + 1], produced: { type: 'step/end' } } });
  });
});
