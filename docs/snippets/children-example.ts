import { ChildManager, childTools, createRuntime, MemoryEventStore, ScriptedModel, type Agent } from '../../index.js';

/** What the example leaves behind, for the test to check. */
export interface ChildrenExample {
  readonly parent: Agent;
  readonly childSessionId: string;
  readonly followupId: string;
}

/** A parent starts a continuable child, the child reports, settles, and is brought back by a later follow-up. */
export const childrenExample = async (): Promise<ChildrenExample> => {
  // #region children
  // one scripted model for everyone: the child reports once, then answers; the parent just acknowledges
  const model = new ScriptedModel([], {
    whenExhausted: (request) => (request.system === 'researcher' && request.step === 1 && request.turn === 1
      ? { toolCalls: [{ callId: 'r1', name: 'report', arguments: { output: 'found 3 candidates' } }] }
      : 'ok'),
  });
  let children!: ChildManager;
  const runtime = createRuntime({ store: new MemoryEventStore(), model, tools: childTools(() => children) });
  children = new ChildManager({ runtime });
  const parent = runtime.createSession({ sessionId: 'lead' });

  // start: resolves when the child's inbox accepted the prompt (not when it ran)
  const { childSessionId } = await children.startContinuable(parent, { content: 'find candidates', label: 'research', persona: 'researcher' });

  // the child reports (a steer into the parent), finishes, settles: its activation is disposed and the parent
  // gets a settlement account ("… completed its work.") after the report
  while (children.state(childSessionId) !== 'absent') await new Promise((r) => setTimeout(r, 1));

  // later: a follow-up cold-resumes the child from its own log (a new activation epoch) and queues a turn there
  const followupId = await children.followup(parent, childSessionId, 'now rank them');
  // #endregion children
  while (children.state(childSessionId) !== 'absent') await new Promise((r) => setTimeout(r, 1));
  await parent.whenIdle();
  return { parent, childSessionId, followupId };
};
