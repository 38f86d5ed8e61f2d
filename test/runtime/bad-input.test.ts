import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { isInvalidMessageError, isInvalidSpliceError } from '../../domain/errors.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { ModelPort } from '../../runtime/ports/model.js';
import { createRuntime } from '../../runtime/runtime.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { expectConsistent, setup } from './harness.js';

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
};

describe('bad input to the agent is refused with a typed error and changes nothing', () => {
  it('inbox edits with a bad target, coordinates or messages', async () => {
    const h = setup();
    const before = h.agent.events.length;
    expect(isInvalidSpliceError(thrown(() => h.agent.inbox.splice('later' as never, 0, 0, msg('A'))))).toBe(true);
    expect(isInvalidSpliceError(thrown(() => h.agent.inbox.splice('next-turn', '1' as never, 0, msg('A'))))).toBe(true);
    expect(isInvalidSpliceError(thrown(() => h.agent.send(msg('A'), 'nowhere' as never, true)))).toBe(true);
    expect(isInvalidMessageError(thrown(() => h.agent.followup({ id: 'A', role: 'user', content: 'not blocks', source: { kind: 'user' } } as never)))).toBe(true);
    expect(isInvalidMessageError(thrown(() => h.agent.followup({ ...msg('A'), extra: 1 } as never)))).toBe(true);
    expect(isInvalidMessageError(thrown(() => h.agent.steer({ ...msg('B'), content: [{ type: 'text', text: 'x', when: new Date() }] } as never)))).toBe(true);
    expect(h.agent.events.length).toBe(before);
    expect(h.agent.status).toBe('idle');
    await expectConsistent(h);
  });

  it('a model answer with a malformed block ends the turn error; the log stays valid', async () => {
    const model: ModelPort = {
      complete: async () => ({ content: [{ type: 'video', url: 'x' } as never], finishReason: 'stop' }),
    };
    const store = new MemoryEventStore();
    const agent = createRuntime({ store, model, clock: steppingClock(), ids: sequentialIds(), logger: silentLogger, writeBatchDelayMs: 1 }).createSession();
    const errors: string[] = [];
    agent.on('error', (e) => errors.push(e.error.message));
    agent.followup(msg('A'));
    await agent.whenIdle();
    expect(agent.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'error' } } });
    expect(agent.events.some((e) => e.type === 'assistant/message')).toBe(false);
    expect(errors[0]).toContain('assistant/message');
  });

  it('a tool outcome with malformed content becomes an error result the model sees; the turn goes on', async () => {
    const h = setup({
      script: [{ toolCalls: [{ callId: 'c1', name: 'bad' }] }, 'handled'],
      tools: [{ name: 'bad', execute: () => ({ content: [{ type: 'audio' } as never] }) }],
    });
    h.agent.followup(msg('A'));
    await h.agent.whenIdle();
    expect(h.durable().slice(-7)).toEqual(['TC(c1)', 'TR(c1)', 'SE(1,1)', 'SS(1,2)', 'AM', 'SE(1,2)', 'TE(1,completed)']);
    const result = h.agent.events.find((e) => e.type === 'tool/result')!.data as { error: { code: string }; message: { isError: boolean } };
    expect(result).toMatchObject({ error: { code: 'INVALID_TOOL_OUTCOME' }, message: { isError: true } });
    await expectConsistent(h);
  });

  it('additional contexts that are not messages, or repeat a pending id, become an error result; nothing is staged', async () => {
    const h = setup({
      script: [{ toolCalls: [{ callId: 'c1', name: 'ctx' }, { callId: 'c2', name: 'dup' }] }, 'handled'],
      tools: [
        { name: 'ctx', execute: () => ({ content: 'ok', additionalContexts: [{ id: '' } as never] }) },
        { name: 'dup', execute: () => ({ content: 'ok', additionalContexts: [ctx('D'), ctx('D')] }) },
      ],
    });
    h.agent.followup(msg('A'));
    await h.agent.whenIdle();
    expect(h.durable().slice(-9)).toEqual(['TC(c1)', 'TR(c1)', 'TC(c2)', 'TR(c2)', 'SE(1,1)', 'SS(1,2)', 'AM', 'SE(1,2)', 'TE(1,completed)']);
    const results = h.agent.events.filter((e) => e.type === 'tool/result').map((e) => e.data as { error?: { code: string }; message: { content: { text: string }[] } });
    expect(results.map((r) => r.error?.code)).toEqual(['INVALID_TOOL_OUTCOME', 'INVALID_TOOL_OUTCOME']);
    expect(results[1]!.message.content[0]!.text).toContain('D');
    expect(h.agent.events.some((e) => e.type === 'agent/inbox/spliced' && (e.data as { target: string }).target === 'next-step')).toBe(false);
    await expectConsistent(h);
  });
});
