import { createRuntime, createUserMessage, MemoryEventStore, ScriptedModel, enter, type Agent } from '../../index.js';

// #region quickstart
/** A scripted agent: two queued prompts, a steer from inside a tool, a pre-step hook that filters what the model sees. */
export const quickstart = async (): Promise<Agent> => {
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'search' }] }, 'found it', 'ticket filed']),
    tools: [
      {
        name: 'search',
        execute: (_args, { agent }) => {
          agent.steer(createUserMessage('only last week, please')); // lands in next-step: claimed at the next step
          return { content: '3 results' };
        },
      },
    ],
  });
  const agent = runtime.createSession();
  // every proposed step passes the pre-step waterfall: here, keep messages that contain a secret out of the step —
  // out of the model request and the transcript (no user/message). The splice that admitted such a message is
  // already in the durable log, secret included: to keep a secret out of the store, redact it before followup().
  agent.on('pre-step', async ({ messages }, next) => {
    const decision = await next();
    return decision.kind === 'enter' ? enter(messages.filter((m) => !JSON.stringify(m.content).includes('sk-'))) : decision;
  });
  agent.followup(createUserMessage('find the flaky test'));
  agent.followup(createUserMessage('then file a ticket')); // queued: its own turn, after the first
  await agent.whenIdle();
  await agent.dispose(); // drains the log to the store
  return agent;
};
// #endregion quickstart
