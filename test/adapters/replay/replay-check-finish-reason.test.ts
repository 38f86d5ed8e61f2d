import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { AssistantMessageData, LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { msg } from '../../../testing/log-builder.js';

/**
 * An answer cut at its token limit records why (`finishReason: 'max-tokens'` on its `assistant/message`), so a
 * replay check answers each recorded answer as it finished: in a turn that ended `max-tokens`, a text-only answer
 * that finished normally is not taken as cut.
 */

/**
 * Turn 1: a text-only answer that finishes normally while a steer arrives, a tool round, then an answer cut at the
 * token limit (the turn ends max-tokens). The turn would end after the tool round if its first answer had been cut.
 */
const session = async (script?: ConstructorParameters<typeof ScriptedModel>[0]): Promise<readonly LogEvent[]> => {
  let agent!: Agent;
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel(
      script ?? [
        () => {
          agent.steer(msg('S'));
          return 'first';
        },
        { toolCalls: [{ callId: 'c1', name: 'act' }] },
        { text: 'cut', finishReason: 'max-tokens' },
      ],
    ),
    tools: [{ name: 'act', execute: () => ({ content: 'acted' }) }],
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
  });
  agent = runtime.createSession({ sessionId: 'finish-reason' });
  agent.followup(msg('A'));
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

/** `events` as a runtime wrote them before it recorded finish reasons. */
const withoutFinishReasons = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e) => {
    if (e.type !== 'assistant/message') return e;
    const { finishReason: _f, ...data } = e.data as AssistantMessageData;
    return { ...e, data };
  }) as LogEvent[];

const answers = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'assistant/message').map((e) => e.data as AssistantMessageData);

describe('replayCheck with recorded finish reasons', () => {
  it('records max-tokens on the cut answer only, and reproduces a max-tokens turn whose earlier text answer finished normally', async () => {
    const events = await session();
    expect(answers(events).map((a) => [a.step, a.finishReason ?? null])).toEqual([
      [1, null],
      [2, null],
      [3, 'max-tokens'],
    ]);
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: { kind: 'max-tokens' } });
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });

  it('the same log without finish reasons (as written before they were recorded) stays valid, and is replayed by the old reading: its first answer taken as cut, the turn closed after the tool round', async () => {
    const events = await session();
    const old = withoutFinishReasons(events);
    const third = old.find((e) => e.type === 'step/start' && (e.data as { step: number }).step === 3)!;
    expect(await replayCheck(old)).toMatchObject({ ok: false, divergence: { seq: third.seq, type: 'step/start', recorded: third, produced: { type: 'turn/end', data: { reason: { kind: 'max-tokens' } } } } });
  });

  it('an old log whose max-tokens turn the old reading fits is still reproduced, compared without the finish reason today’s runtime writes', async () => {
    const events = await session([{ text: 'partial', toolCalls: [{ callId: 'c9', name: 'act' }], finishReason: 'max-tokens' }]);
    expect(answers(events).map((a) => a.finishReason)).toEqual(['max-tokens']);
    expect(await replayCheck(withoutFinishReasons(events))).toEqual({ ok: true, events: events.length });
  });
});
