import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import { createRuntime } from '../../../runtime/runtime.js';
import type { Tool } from '../../../runtime/tools.js';
import { msg } from '../../../testing/log-builder.js';

/** Two parallel calls whose bodies overlap: `slow` steers after `fast` has steered and returned. */
const parallelSession = async (): Promise<readonly LogEvent[]> => {
  let fastDone!: () => void;
  const fastReturned = new Promise<void>((r) => (fastDone = r));
  const tools: Tool<Agent>[] = [
    {
      name: 'slow',
      parallel: true,
      execute: async (_a, c) => {
        await fastReturned;
        await new Promise((r) => setImmediate(r));
        c.agent.steer(msg('from-slow'));
        return { content: 'slow done' };
      },
    },
    {
      name: 'fast',
      parallel: true,
      execute: (_a, c) => {
        c.agent.steer(msg('from-fast'));
        fastDone();
        return { content: 'fast done' };
      },
    },
  ];
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([{ toolCalls: [{ callId: 's1', name: 'slow', arguments: {} }, { callId: 'f1', name: 'fast', arguments: {} }] }, 'both done']),
    tools,
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
  });
  const agent = runtime.createSession({ sessionId: 'parallel' });
  agent.followup(msg('go'));
  await agent.whenIdle();
  await agent.checkpoint();
  return agent.events;
};

describe('replayCheck of parallel tool calls whose bodies interleaved', () => {
  it('runs the calls the recording dispatched together together again, and reproduces the log', async () => {
    const events = await parallelSession();
    const seqOf = (pred: (e: LogEvent) => boolean) => events.findIndex(pred);
    const steerOf = (id: string) => seqOf((e) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes(id));
    // the recording: both calls dispatched before either result; the fast body's steer before the slow one's
    expect(seqOf((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === 'f1')).toBeLessThan(seqOf((e) => e.type === 'tool/result'));
    expect(steerOf('from-fast')).toBeLessThan(steerOf('from-slow'));
    expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });
});
