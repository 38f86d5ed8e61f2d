import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';

/** A session of `answers` (texts; a promise is awaited), driven by `run`. */
const session = async (answers: readonly (() => string | Promise<string>)[], run: (agent: Agent) => Promise<void>): Promise<readonly LogEvent[]> => {
  let i = 0;
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([], { whenExhausted: () => answers[Math.min(i++, answers.length - 1)]!() }),
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
  });
  const agent = runtime.createSession({ sessionId: 'points' });
  await run(agent);
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};
const typeAfter = (events: readonly LogEvent[], type: string): string | undefined => events[events.findIndex((e) => e.type === type) + 1]?.type;

describe('replayCheck re-admits a recorded input at the point it arrived', () => {
  it('an input between one turn’s end and the next turn’s start (the driver goes on without waiting)', async () => {
    const events = await session([() => 'ok'], async (agent) => {
      agent.followup(msg('A'));
      agent.followup(msg('B'));
      const off = agent.onEvent((e) => {
        if (e.type !== 'turn/end') return;
        off();
        queueMicrotask(() => agent.followup(msg('between')));
      });
    });
    expect(typeAfter(events, 'turn/end')).toBe('agent/inbox/spliced');
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a cancel that struck a request before it answered anything', async () => {
    const events = await session([() => new Promise((r) => setTimeout(() => r('late'), 50))], async (agent) => {
      agent.followup(msg('A'));
      await new Promise((r) => setImmediate(r));
      agent.cancel({ kind: 'user' });
    });
    expect(events.some((e) => e.type === 'assistant/message')).toBe(false);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a pre-step hook’s steer right after the turn’s first write is the hook’s, not a second input; a changed hook is named', async () => {
    const hook = (text: string) => (agent: Agent): void => {
      const done = new WeakSet<object>();
      agent.on('pre-step', (c, next) => {
        if (!done.has(c.agent)) {
          done.add(c.agent);
          c.agent.steer(msg(text));
        }
        return next();
      });
    };
    const events = await session([() => 'ok'], async (agent) => {
      hook('from-hook')(agent);
      agent.followup(msg('A'));
    });
    expect(await replayCheck(events, { install: hook('from-hook') })).toEqual({ ok: true, events: events.length });
    const changed = await replayCheck(events, { install: hook('changed') });
    const steer = events.find((e) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes('from-hook'))!;
    // an input from outside that arrived during the same write comes first: only the hook's own is its send
    const both = await session([() => 'ok'], async (agent) => {
      hook('from-hook')(agent);
      agent.followup(msg('A'));
      agent.followup(msg('outside'));
    });
    expect(await replayCheck(both, { install: hook('from-hook') })).toEqual({ ok: true, events: both.length });
    // the recorded steer is the hook's (actor hook:pre-step), not re-admitted: the changed hook's steer is named there
    expect(steer.metadata).toEqual({ actor: 'hook:pre-step', actorKind: 'plugin' });
    expect(changed.ok ? null : { seq: changed.divergence.seq, type: changed.divergence.type, produced: JSON.stringify(changed.divergence.produced?.data) }).toEqual({
      seq: steer.seq,
      type: 'agent/inbox/spliced',
      produced: expect.stringContaining('"id":"changed"'),
    });
  });
});
