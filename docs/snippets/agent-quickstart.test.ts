import { expect, it } from 'vitest';
import { auditLines, createRuntime, createUserMessage, enter, MemoryEventStore, ScriptedModel } from '../../index.js';
import { quickstart } from './agent-quickstart.js';

it('README snippet: two turns, the steer from the tool body runs as a second step of turn 1', async () => {
  const agent = await quickstart();
  const report = auditLines(agent.sessionId, agent.events.map((e) => JSON.stringify(e)));
  expect(report.ok).toBe(true);
  expect(report.turns.map((t) => [t.turn, t.steps, t.reason])).toEqual([[1, 2, 'completed'], [2, 1, 'completed']]);
  expect(report.messages.map((m) => m.class)).toEqual(['prompt', 'steering', 'prompt']);
});


it('a pre-step rewrite keeps a dropped message out of the model request and the transcript, not out of the log', async () => {
  const model = new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'search' }] }, 'done']);
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model,
    tools: [
      {
        name: 'search',
        execute: (_args, { agent }) => {
          agent.steer(createUserMessage('my key is sk-123'));
          agent.steer(createUserMessage('only last week, please'));
          return { content: '3 results' };
        },
      },
    ],
  });
  const agent = runtime.createSession();
  agent.on('pre-step', async ({ messages }, next) => {
    const decision = await next();
    return decision.kind === 'enter' ? enter(messages.filter((m) => !JSON.stringify(m.content).includes('sk-'))) : decision;
  });
  agent.followup(createUserMessage('find the flaky test'));
  await agent.whenIdle();
  await agent.dispose();
  const withSecret = agent.events.filter((e) => JSON.stringify(e.data).includes('sk-123')).map((e) => e.type);
  expect(withSecret).toEqual(['agent/inbox/spliced']); // admitted: durable, secret included
  expect(JSON.stringify(model.requests.map((r) => r.messages))).not.toContain('sk-123');
  expect(model.requests).toHaveLength(2);
  expect(JSON.stringify(model.requests[1]!.messages)).toContain('only last week, please');
  expect(agent.inbox.nextStep).toEqual([]); // consumed by the claim, not put back
});
