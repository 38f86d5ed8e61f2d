import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';

/** A session whose tool `finish` concludes the turn (turn 1), then a turn where the same tool does not (turn 2). */
const concludingSession = async () => {
  let calls = 0;
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([
      { toolCalls: [{ callId: 'a1', name: 'look', arguments: {} }, { callId: 'a2', name: 'finish', arguments: {} }] },
      { toolCalls: [{ callId: 'b1', name: 'finish', arguments: {} }] },
      'after the unconcluded round',
    ]),
    tools: [
      { name: 'look', execute: () => ({ content: 'looked' }) },
      { name: 'finish', execute: () => ({ content: 'finished', ...(++calls === 1 ? { concludesTurn: true } : {}) }) },
    ],
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
  });
  const agent = runtime.createSession({ sessionId: 'concludes' });
  agent.followup(msg('first'));
  await agent.whenIdle();
  agent.followup(msg('second'));
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

describe('replayCheck of a turn a tool outcome concluded (concludesTurn, which the log does not record)', () => {
  it('reproduces it: the round’s last result is answered as concluding when its step ends the turn completed', async () => {
    const events = await concludingSession();
    const names = events.map((e) => e.type);
    // turn 1 ends right after its tool round; turn 2 asks the model again after it
    const firstEnd = names.indexOf('turn/end');
    expect(names.slice(firstEnd - 2, firstEnd + 1)).toEqual(['tool/result', 'step/end', 'turn/end']);
    expect(events.filter((e) => e.type === 'step/start').map((e) => (e.data as { turn: number }).turn)).toEqual([1, 2, 2]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });
});

describe('replayCheck of a round whose concluding call is followed by a call that throws', () => {
  it('reproduces it: the concluding outcome is the last result that did not throw', async () => {
    const runtime = createRuntime({
      store: new MemoryEventStore(),
      model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'finish', arguments: {} }, { callId: 'c2', name: 'broken', arguments: {} }] }]),
      tools: [
        { name: 'finish', execute: () => ({ content: 'finished', concludesTurn: true }) },
        {
          name: 'broken',
          execute: () => {
            throw new Error('broken tool');
          },
        },
      ],
      clock: steppingClock(),
      ids: sequentialIds(),
      logger: silentLogger,
      writeBatchDelayMs: 0,
    });
    const agent = runtime.createSession({ sessionId: 'concludes-then-throws' });
    agent.followup(msg('go'));
    await agent.whenIdle();
    await agent.checkpoint();
    const events = agent.events;
    // one step: the turn ends completed after the round, the last result being the thrown error
    expect(events.filter((e) => e.type === 'step/start')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: unknown }).error !== undefined)).toEqual([false, true]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });
});
