import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';
import { FaultyStore } from '../../support/faulty-store.js';

describe('replayCheck of a store failure the log shows', () => {
  it('a failed checkpoint before a model request: the replay fails the same write, and the turn that failure ended is reproduced', async () => {
    const store = new FaultyStore();
    const runtime = createRuntime({ store, model: new ScriptedModel([], { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 60_000 });
    const agent = runtime.createSession({ sessionId: 'failed-checkpoint' });
    agent.on('pre-step', (_c, next) => {
      store.failNext('fail'); // the pre-step checkpoint has passed; the one before the model call fails
      return next();
    });
    agent.followup(msg('A'));
    await agent.whenIdle();
    await agent.checkpoint();
    const events = agent.events;
    const end = events.at(-1)!;
    expect(end.type).toBe('turn/end');
    expect((end.data as { reason: { kind: string } }).reason.kind).toBe('error');
    expect(events.some((e) => e.type === 'assistant/message' || e.type === 'request/error')).toBe(false);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });
});
