import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { MessageId } from '../../domain/brand.js';
import { createUserMessage } from '../../domain/message.js';
import { auditSession } from '../../host/session-audit.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';

// Context a tool's result stages is admitted by the tool: its splice records the actor `tool:<name>`, kind `plugin`
// (docs/host.md, "Actors: who did what"), and is caused by the tool/result that carried it.

const context = (id: string, text: string) => createUserMessage(text, { kind: 'plugin', plugin: 'reader' }, { newId: () => id as MessageId });

describe("a tool's staged context", () => {
  it('is admitted by the tool (tool:<name>, plugin), caused by its tool/result, even when the runtime has a default actor', async () => {
    const store = new MemoryEventStore();
    const runtime = createRuntime({
      store,
      model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'read_log' }] }, 'done'], { whenExhausted: 'ok' }),
      tools: [{ name: 'read_log', execute: () => ({ content: 'ok', additionalContexts: [context('ctx-1', 'one'), context('ctx-2', 'two')] }) }],
      clock: steppingClock(),
      ids: sequentialIds(),
      logger: silentLogger,
      actor: 'svc',
    });
    const agent = runtime.createSession({ sessionId: 'staged-actor' });
    agent.followup(createUserMessage('go', { kind: 'user' }, { newId: () => 'p1' as MessageId }));
    await agent.whenIdle();
    const result = agent.events.find((e) => e.type === 'tool/result')!;
    const staged = agent.events.filter((e) => e.type === 'agent/inbox/spliced' && e.seq > result.seq && (e.data as { inserted: unknown[] }).inserted.length > 0);
    expect(staged.map((e) => (e.data as { inserted: { id: string }[] }).inserted.map((m) => m.id))).toEqual([['ctx-1'], ['ctx-2']]);
    for (const e of staged) expect(e.metadata).toEqual({ causationId: result.id, actor: 'tool:read_log', actorKind: 'plugin' });
    const audit = await auditSession('staged-actor', agent.events);
    expect(audit.actions.filter((a) => a.kind === 'admitted').map((a) => [a.id, a.actor, a.actorKind])).toEqual([
      ['p1', 'svc', 'user'],
      ['ctx-1', 'tool:read_log', 'plugin'],
      ['ctx-2', 'tool:read_log', 'plugin'],
    ]);
    await agent.dispose();
    await store.close();
  });
});
