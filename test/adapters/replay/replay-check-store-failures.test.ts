import { describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptStep } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import type { LogEvent, TurnEndData } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime, type RuntimeOptions } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';
import { FaultyStore } from '../../support/faulty-store.js';

/**
 * The store failures a recorded log shows, each re-driven by a replay check: the replay fails the same write of its
 * own store with the recorded error, and the rest is reproduced. (A failed checkpoint before a tool's body, and a
 * tool result's write refused by a commit check, are replay-checked by test/runtime/scenarios-tools.test.ts and
 * test/runtime/tools.property.test.ts.)
 */

/** A session on a store whose appends fail as `store.failNext` plans, driven by `run`; the store writes only at checkpoints. */
const session = async (run: (agent: Agent, store: FaultyStore) => Promise<void>, script: readonly ScriptStep[] = [], retry: RuntimeOptions['retry'] = false): Promise<readonly LogEvent[]> => {
  const store = new FaultyStore();
  const runtime = createRuntime({ store, model: new ScriptedModel(script, { whenExhausted: 'ok' }), clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 60_000, retry });
  const agent = runtime.createSession({ sessionId: 'store-failures' });
  await run(agent, store);
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

const turnEnds = (events: readonly LogEvent[]): TurnEndData[] => events.filter((e) => e.type === 'turn/end').map((e) => e.data as TurnEndData);

describe('replayCheck of a store failure the log shows', () => {
  it('a failed checkpoint before a model request: the replay fails the same write, and the turn that failure ended is reproduced', async () => {
    const events = await session(async (agent, store) => {
      agent.on('pre-step', (_c, next) => {
        store.failNext('fail'); // the pre-step checkpoint has passed; the one before the model call fails
        return next();
      });
      agent.followup(msg('A'));
    });
    expect(turnEnds(events).map((t) => t.reason.kind)).toEqual(['error']);
    expect(events.some((e) => e.type === 'assistant/message' || e.type === 'request/error')).toBe(false);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a failed checkpoint before a turn’s first pre-step: the turn’s error names it, and the replay fails the same write', async () => {
    const events = await session(async (agent, store) => {
      store.failNext('fail');
      agent.followup(msg('A'));
      await agent.whenIdle();
      agent.followup(msg('B')); // the session goes on: the next turn is reproduced too
    });
    expect(turnEnds(events)).toEqual([
      { turn: 1, reason: { kind: 'error', error: { code: 'UNKNOWN', message: "checkpoint before turn 1's first step failed: injected write failure: injected write failure" } } },
      { turn: 2, reason: { kind: 'completed' } },
    ]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a failed durable receipt of accept: with a wake, it is the turn’s first checkpoint; without, the write is retried later and the log is as usual', async () => {
    const woken = await session(async (agent, store) => {
      store.failNext('fail');
      await expect(agent.accept(msg('A'))).rejects.toThrow('injected write failure');
    });
    expect(turnEnds(woken).map((t) => t.reason.kind)).toEqual(['error']);
    expect(await replayCheck(woken)).toEqual({ ok: true, events: woken.length });
    const parked = await session(async (agent, store) => {
      store.failNext('fail');
      await expect(agent.accept(msg('A'), { wake: false })).rejects.toThrow('injected write failure');
      agent.followup(msg('B'));
    });
    expect(turnEnds(parked).map((t) => t.reason.kind)).toEqual(['completed', 'completed']);
    expect(await replayCheck(parked)).toEqual({ ok: true, events: parked.length });
  });

  it('a failed checkpoint before a retried request: the failed attempt’s request/error is the last write, and the replay fails it', async () => {
    const events = await session(
      async (agent, store) => {
        agent.on('request-error', (_c, next) => {
          store.failNext('fail'); // the retry is decided; the checkpoint before its request fails
          return next();
        });
        agent.followup(msg('A'));
      },
      [{ error: { message: 'overloaded', code: 'HTTP_529', status: 529 } }],
      { maxAttempts: 3, baseDelayMs: 0, sleep: () => Promise.resolve() },
    );
    const failed = events.filter((e) => e.type === 'request/error');
    expect(failed.map((e) => (e.data as { retryInMs?: number }).retryInMs)).toEqual([0]);
    expect(turnEnds(events)).toEqual([{ turn: 1, reason: { kind: 'error', error: { code: 'UNKNOWN', message: 'injected write failure' } } }]);
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('a throwing pre-step listener is not taken for a failed checkpoint: a listener changed to no longer throw is named at the turn’s end', async () => {
    const throwing = (agent: Agent) =>
      agent.on('pre-step', () => {
        throw new Error('policy refused');
      });
    const events = await session(async (agent) => {
      throwing(agent);
      agent.followup(msg('A'));
    });
    expect(turnEnds(events)).toEqual([{ turn: 1, reason: { kind: 'error', error: { code: 'UNKNOWN', message: 'policy refused' } } }]);
    expect(await replayCheck(events, { install: throwing })).toEqual({ ok: true, events: events.length });
    const end = events.find((e) => e.type === 'turn/end')!;
    expect(await replayCheck(events)).toMatchObject({ ok: false, divergence: { seq: end.seq, type: 'turn/end', recorded: end, produced: { type: 'step/start' } } });
  });
});
