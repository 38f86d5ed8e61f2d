import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replaySession } from '../../../adapters/replay/replay-from.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { diffSessions } from '../../../audit/session-diff.js';
import type { LogEvent } from '../../../domain/events.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import type { ModelPort, ModelRequest } from '../../../runtime/ports/model.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';

const act = { name: 'act', execute: () => ({ content: 'acted' }) };
const shape = (events: readonly LogEvent[]): string[] =>
  events.map((e) => (e.type === 'turn/end' ? `turn/end:${JSON.stringify((e.data as { reason: unknown }).reason)}` : e.type === 'step/start' ? `step/start:${(e.data as { turn: number }).turn}.${(e.data as { step: number }).step}` : e.type));

/** Turn 1: a tool round, then a user (`user:ana`) cancels during step 1.2's request; turn 2 answers a follow-up. */
const canceledSession = async (store: MemoryEventStore) => {
  let requests = 0;
  let seen: (() => void) | null = null;
  const asked = new Promise<void>((r) => (seen = r));
  const model: ModelPort = {
    provider: 'scripted',
    model: 'scripted-1',
    complete: (req: ModelRequest) => {
      const n = ++requests;
      if (n === 1) return Promise.resolve({ content: [{ type: 'tool-call', callId: 'c1', name: 'act', arguments: '{}' }], finishReason: 'tool-calls' });
      if (n === 2) {
        seen!();
        return new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      }
      return Promise.resolve({ content: [{ type: 'text', text: 'done' }], finishReason: 'stop' });
    },
  };
  const runtime = createRuntime({ store, model, tools: [act], clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 0 });
  const agent = runtime.createSession({ sessionId: 'origin' });
  agent.followup(msg('first'));
  await asked;
  agent.cancel({ kind: 'user' }, { keepInbox: true, metadata: { actor: 'user:ana' } });
  await agent.whenIdle();
  agent.followup(msg('second'));
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

describe('replay --from past a recorded cancel that aborted a turn', () => {
  it('issues the cancel again at the step and phase it struck: the turn ends aborted by the same actor, and the next turn runs', async () => {
    const store = new MemoryEventStore();
    const origin = await canceledSession(store);
    const end = origin.find((e) => e.type === 'turn/end')!;
    expect(end).toMatchObject({ data: { turn: 1, reason: { kind: 'aborted', reason: { kind: 'user' } } }, metadata: { actor: 'user:ana' } });
    const model = new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'act', arguments: {} }] }, 'done']);
    const result = await replaySession('origin', { store, from: { turn: 1, step: 1 }, model, tools: [act], sessionId: 'again' });
    // the follow-up of turn 2 and the cancel ('first' was pending at the fork: sent first, not counted)
    expect(result.inputs).toEqual({ exact: 2, adapted: 0, dropped: 0 });
    const own = (events: readonly LogEvent[], from: number) => shape(events.slice(from));
    const originTurns = origin.findIndex((e) => e.type === 'turn/start');
    const replayTurns = result.events.findIndex((e, i) => i >= result.boundary && e.type === 'turn/start');
    expect(own(result.events, replayTurns)).toEqual(own(origin, originTurns));
    const replayEnd = result.events.find((e, i) => i >= result.boundary && e.type === 'turn/end')!;
    expect(replayEnd).toMatchObject({ data: end.data, metadata: { actor: 'user:ana' } });
    expect(diffSessions(origin, result.events).turns.filter((t) => !t.same)).toEqual([]);
  });

  it('a cancel of a step the new model never reaches is dropped', async () => {
    const store = new MemoryEventStore();
    await canceledSession(store);
    // the new model answers step 1.1 with text: turn 1 completes before step 1.2, where the cancel struck
    const result = await replaySession('origin', { store, from: { turn: 1, step: 1 }, model: new ScriptedModel(['no tools', 'done']), tools: [act], sessionId: 'other' });
    expect(result.inputs.dropped).toBe(1);
    expect(result.events.filter((e, i) => i >= result.boundary && e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed', 'completed']);
  });
});
