import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EchoModel } from '../../../adapters/model/echo/echo-model.js';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayBoundary, replaySession } from '../../../adapters/replay/replay-from.js';
import { diffSessions } from '../../../audit/session-diff.js';
import type { Agent } from '../../../runtime/agent.js';
import { enter } from '../../../runtime/hooks.js';
import { randomProgram, randomReply, runRandomSession, type RandomProgram } from '../../support/random-session.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { msg } from '../../../testing/log-builder.js';

const noWait = { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, random: () => 0 } as const;
const entered = (events: readonly { type: string; data: unknown }[]) => events.filter((e) => e.type === 'user/message').map((e) => (e.data as { id: string }).id);

describe('replaySession (a counterfactual replay)', () => {
  it('with the recorded model again and the recorded tools, a random session replays from its first step into an equal session', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, async (p) => {
        const { agent, store } = await runRandomSession(p);
        const model = new ScriptedModel([], { whenExhausted: (req, { index }) => randomReply(p, index, req.attempt) });
        const install = (a: Agent) => {
          if (p.dropsOddSteering) a.on('pre-step', (c, next) => (c.step % 2 === 0 ? enter(c.messages.filter((m) => !m.id.startsWith('steer'))) : next()));
        };
        const result = await replaySession('rand', { store, from: { turn: 1, step: 1 }, model, recordedTools: true, retry: noWait, sessionId: 'again', install });
        const diff = diffSessions(agent.events, result.events);
        expect(diff.turns.filter((t) => !t.same)).toEqual([]);
        expect(result.events[0]).toMatchObject({ type: 'session/created', data: { sessionId: 'again', parentSession: 'rand', seedLength: result.boundary, origin: 'fork' } });
      }),
      { numRuns: 20 },
    );
  });

  it('with the echo model from step 1.2: the same inputs enter at the same steps, the answers are the echo’s', async () => {
    const p: RandomProgram = { top: [{ send: 'followup' }, { send: 'followup' }], replies: ['tool', 'text'], inner: ['steer'], dropsOddSteering: false, systemPerTurn: false };
    const { agent, store } = await runRandomSession(p);
    const result = await replaySession('rand', { store, from: { turn: 1, step: 2 }, model: new EchoModel({ delayMs: 0 }), recordedTools: true, sessionId: 'echoed' });
    expect(result.point).toEqual({ turn: 1, step: 2 });
    const turnOne = agent.events.find((e) => e.type === 'turn/start')!;
    expect(result.boundary).toBe(turnOne.seq);
    // every recorded input enters at the step it entered before (the echo calls no tool: the recording's later tool rounds, and what they staged, are gone)
    const again = entered(result.events.slice(result.boundary + 2));
    expect(again).toEqual(['followup-0', 'steer-2', 'staged-c0', 'followup-1', 'final']);
    const stepOf = (events: readonly { type: string; data: unknown }[], id: string) => {
      let at = '';
      for (const e of events) {
        if (e.type === 'step/start') at = `${(e.data as { turn: number }).turn}.${(e.data as { step: number }).step}`;
        if (e.type === 'user/message' && (e.data as { id: string }).id === id) return at;
      }
      return null;
    };
    expect(again.map((id) => stepOf(result.events, id))).toEqual(again.map((id) => stepOf(agent.events, id)));
    const answers = result.events.filter((e) => e.type === 'assistant/message').map((e) => (e.data as { turn: number; step: number; message: { source?: { provider: string } } }));
    // step 1.1 is answered from the recording; from 1.2 on, by the echo model
    expect(answers[0]).toMatchObject({ turn: 1, step: 1 });
    expect(answers[0]!.message.source?.provider).toBe('scripted');
    expect(answers.slice(1).every((a) => a.message.source?.provider === 'echo')).toBe(true);
    expect(diffSessions(agent.events, result.events).equal).toBe(false);
  });

  it('names its fork boundary and first step from a seq or a step, and refuses a point the session lacks', async () => {
    const { agent } = await runRandomSession({ top: [{ send: 'followup' }], replies: ['text'], inner: [], dropsOddSteering: false, systemPerTurn: false });
    const start = agent.events.find((e) => e.type === 'step/start')!;
    const turnStart = agent.events.find((e) => e.type === 'turn/start')!;
    expect(replayBoundary(agent.events, { seq: start.seq })).toEqual({ boundary: turnStart.seq, point: { turn: 1, step: 1 } });
    expect(replayBoundary(agent.events, { seq: 1 })).toEqual({ boundary: 1, point: { turn: 1, step: 1 } });
    expect(() => replayBoundary(agent.events, { turn: 9, step: 1 })).toThrow(/no step 9.1/);
    expect(() => replayBoundary(agent.events, { seq: 10_000 })).toThrow(/outside/);
  });
});

describe('replaySession with a hook that sends inputs', () => {
  it('its recorded inputs are re-admitted without the hook, and sent once by the hook when installed', async () => {
    const policy = (a: Agent) =>
      a.on('pre-step', (c, next) => {
        if (c.step === 1) c.agent.inject(msg(`policy-${c.turn}`, 'Be careful.', { kind: 'plugin', plugin: 'policy' }));
        return next();
      });
    const store = new MemoryEventStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
    const agent = runtime.createSession({ sessionId: 'hooked' });
    policy(agent);
    agent.followup(msg('A'));
    agent.followup(msg('B'));
    await agent.whenIdle();
    await agent.dispose();
    const policies = (events: readonly { type: string; data: unknown }[]) => entered(events).filter((id) => id.startsWith('policy-'));
    expect(policies(agent.events)).toEqual(['policy-1', 'policy-2']);
    const model = () => new ScriptedModel([], { whenExhausted: 'ok' });
    const withHook = await replaySession('hooked', { store, from: { turn: 1, step: 1 }, model: model(), sessionId: 'with-hook', install: policy });
    expect(policies(withHook.events.slice(withHook.boundary))).toEqual(['policy-1', 'policy-2']);
    const without = await replaySession('hooked', { store, from: { turn: 1, step: 1 }, model: model(), sessionId: 'without' });
    expect(policies(without.events.slice(without.boundary))).toEqual(['policy-1', 'policy-2']);
  });
});
