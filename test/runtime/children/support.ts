import type { Agent } from '../../../runtime/agent.js';
import type { ChildManager } from '../../../runtime/children/child-manager.js';
import type { Tool } from '../../../runtime/tools.js';

/**
 * Polls until `predicate` holds: one macrotask at a time at first, then every 2 ms (a real database answers in
 * milliseconds); fails after about 20 s instead of hanging.
 */
export const until = async (predicate: () => boolean): Promise<void> => {
  for (let i = 0; i < 10_000; i++) {
    if (predicate()) return;
    await new Promise<void>((r) => (i < 200 ? setImmediate(r) : setTimeout(r, 2)));
  }
  throw new Error('condition never held');
};

/** A test tool `spawn {id, task}` that starts a continuable child of the calling agent (through a late-bound manager). */
export const spawnTool = (manager: () => ChildManager): Tool<Agent> => ({
  name: 'spawn',
  execute: async (args, { agent }) => {
    const { id, task } = args as { id: string; task: string };
    const started = await manager().startContinuable(agent, { content: task, childSessionId: id, label: task });
    return { content: started.childSessionId };
  },
});

/** The ids of the user messages in a log, in order (for naming them in notations). */
export const userMessageIds = (agent: Agent): string[] =>
  agent.events.filter((e) => e.type === 'user/message').map((e) => (e.data as { id: string }).id);
