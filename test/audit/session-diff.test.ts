import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { diffSessions } from '../../audit/session-diff.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import { msg } from '../../testing/log-builder.js';

const runtimeOn = (store: MemoryEventStore, answers: string[], prefix = 0) =>
  createRuntime({ store, model: new ScriptedModel(answers, { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(prefix), logger: silentLogger, writeBatchDelayMs: 0 });

describe('diffSessions', () => {
  it('a session with itself, and with a re-run of the same inputs and answers under other ids and times, is equal', async () => {
    const one = runtimeOn(new MemoryEventStore(), ['a1', 'a2']).createSession({ sessionId: 'one' });
    const two = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel(['a1', 'a2'], { whenExhausted: 'ok' }), clock: steppingClock(5_000_000), ids: sequentialIds(7), logger: silentLogger }).createSession({ sessionId: 'two' });
    for (const agent of [one, two]) {
      agent.followup(msg('A'));
      await agent.whenIdle();
      agent.followup(msg('B'));
      await agent.whenIdle();
    }
    expect(diffSessions(one.events, one.events)).toMatchObject({ equal: true, firstDivergentSeq: null, divergence: null, forkPoint: null });
    const d = diffSessions(one.events, two.events);
    expect(d.equal).toBe(true);
    expect(d.turns.every((t) => t.same)).toBe(true);
  });

  it('a fork and its origin: the fork point, the first divergent seq, and the turn that differs', async () => {
    const store = new MemoryEventStore();
    const rt = runtimeOn(store, ['first answer', 'origin answer', 'fork answer']);
    const origin = rt.createSession({ sessionId: 'origin' });
    origin.followup(msg('A'));
    await origin.whenIdle();
    await origin.checkpoint();
    const boundary = origin.events.length;
    origin.followup(msg('B'));
    await origin.whenIdle();
    await origin.checkpoint();
    const fork = await rt.fork('origin', { sessionId: 'fork', boundary });
    fork.followup(msg('C'));
    await fork.whenIdle();
    const d = diffSessions(origin.events, fork.events);
    expect(d.forkPoint).toBe(boundary);
    expect(d.firstDivergentSeq).toBe(boundary);
    // the origin went on with turn 2 where the fork's seed ends
    expect(d.shift).toBe(1);
    expect(d.divergence).toEqual({ a: { type: 'agent/inbox/spliced', data: expect.objectContaining({ target: 'next-turn' }) }, b: { type: 'session/end-seed', data: {} } });
    expect(d.turns.map((t) => [t.turn, t.same])).toEqual([[1, true], [2, false]]);
    expect(d.turns[1]!.a!.entered.map((e) => e.id)).toEqual(['B']);
    expect(d.turns[1]!.b!.entered.map((e) => e.id)).toEqual(['C']);
    expect(diffSessions(fork.events, origin.events)).toMatchObject({ forkPoint: boundary, firstDivergentSeq: boundary + 1, shift: -1 });
  });
});
