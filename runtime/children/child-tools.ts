import { isChildError, type ChildError } from '../../domain/children/child-errors.js';
import type { Agent } from '../agent.js';
import type { Tool, ToolOutcome } from '../tools.js';
import type { ChildManager } from './child-manager.js';

/** The model tools of the children, by name. */
export type ChildToolName = 'send_message' | 'interrupt_agent' | 'list_agents' | 'report';

const ok = (value: unknown): ToolOutcome => ({ content: JSON.stringify(value) });
const failure = (text: string): ToolOutcome => ({ content: text, isError: true });

/** The text a model reads for a refused child operation (stable wording per code). */
export const childErrorText = (e: ChildError, tool: ChildToolName): string => {
  switch (e.code) {
    case 'subagent-unauthorized':
      return tool === 'report' ? 'report is available only to a resident continuable child' : `subagent ${e.childSessionId} belongs to another parent session`;
    case 'subagent-not-resumable':
      return `subagent ${e.childSessionId} cannot be resumed; do not retry ${tool} with this id`;
    case 'subagent-parent-unavailable':
      return 'the direct parent is not live; the report was not delivered';
    case 'subagent-activation-closing':
      return `subagent ${e.childSessionId} is closing; nothing was delivered`;
    case 'subagent-delivery-unavailable':
      return `subagent ${e.childSessionId} cannot take deliveries right now; nothing was delivered`;
    case 'subagent-cancelled':
      return `delivery to subagent ${e.childSessionId} was cancelled; nothing was delivered`;
    case 'subagent-depth-exceeded':
    case 'subagent-duplicate-child':
      return e.message;
  }
};

const stringArg = (args: unknown, key: string): string | null => {
  const v = typeof args === 'object' && args !== null ? (args as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' && v.length > 0 ? v : null;
};

const guarded =
  (tool: ChildToolName, body: (args: unknown, agent: Agent) => Promise<ToolOutcome> | ToolOutcome) =>
  async (args: unknown, { agent }: { readonly agent: Agent }): Promise<ToolOutcome> => {
    try {
      return await body(args, agent);
    } catch (e) {
      if (isChildError(e)) return failure(childErrorText(e, tool));
      throw e;
    }
  };

/**
 * The four model tools of the children, bound to a manager:
 * - `send_message {subagent_id, message}` → `{messageId}`: a follow-up to the caller's child (always a later FIFO
 *   turn, source `coordinator` relay); it returns no answer, and an error means nothing was delivered;
 * - `interrupt_agent {agent_id}` → `{accepted}` with ancestor authority (a direct child or any deeper descendant);
 * - `list_agents {scope?: 'children' | 'descendants'}` → the caller's live children;
 * - `report {output}` → `{messageId}`: only a resident continuable child may call it (others get an error result).
 *
 * Pass the manager, or a function returning it when the tools must exist before the runtime (and so the manager) does.
 */
export const childTools = (children: ChildManager | (() => ChildManager)): Tool<Agent>[] => {
  const manager = (): ChildManager => (typeof children === 'function' ? children() : children);
  return [
  {
    name: 'send_message',
    description: 'Send a follow-up message to one of your continuable subagents. It runs as a later turn of that subagent; no answer is returned.',
    execute: guarded('send_message', async (args, agent) => {
      const id = stringArg(args, 'subagent_id');
      const message = stringArg(args, 'message');
      if (id === null || message === null) return failure('send_message needs a subagent_id and a message (non-empty strings)');
      const messageId = await manager().followup(agent, id, message, { source: { kind: 'coordinator', form: 'relay', senderSessionId: agent.sessionId } });
      return ok({ messageId });
    }),
  },
  {
    name: 'interrupt_agent',
    description: 'Stop the current turn of one of your subagents (direct or deeper). Its queued messages wait for the next message you send.',
    execute: guarded('interrupt_agent', (args, agent) => {
      const id = stringArg(args, 'agent_id');
      if (id === null) return failure('interrupt_agent needs an agent_id (a non-empty string)');
      manager().interrupt(id, { kind: 'ancestor', callerSessionId: agent.sessionId, callerIsLiveEntry: manager().isLiveEntry(agent) });
      return ok({ accepted: true });
    }),
  },
  {
    name: 'list_agents',
    description: 'List your live subagents: scope "children" (default) or "descendants".',
    parallel: true,
    execute: guarded('list_agents', (args, agent) => {
      const scope = stringArg(args, 'scope') ?? 'children';
      if (scope !== 'children' && scope !== 'descendants') return failure('scope is "children" or "descendants"');
      return ok({ agents: manager().list(agent.sessionId, scope) });
    }),
  },
  {
    name: 'report',
    description: 'Report progress or a result to your parent agent. Available only in continuable subagents; repeatable.',
    execute: guarded('report', (args, agent) => {
      const output = stringArg(args, 'output');
      if (output === null) return failure('report needs an output (a non-empty string)');
      return ok({ messageId: manager().report(agent, output) });
    }),
  },
];
};
