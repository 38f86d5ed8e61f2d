import type { MessageId } from '../../domain/brand.js';
import { ChildError } from '../../domain/children/child-errors.js';
import { reportText } from '../../domain/children/settlement.js';
import type { Agent } from '../agent.js';
import type { ChildrenPort } from './children-port.js';

/**
 * `ChildManager.report`: the explicit report of a resident continuable child to its live parent, steered (waking;
 * its id accepted for a parent that is itself a child) or injected (quiet), with the child session as its cause.
 */
export const sendReport = (port: Pick<ChildrenPort, 'registry' | 'runtime' | 'message' | 'reportDelivery'>, child: Agent, output: string): MessageId => {
  const activation = port.registry.get(child.sessionId);
  if (!activation || activation.agent !== child) {
    throw new ChildError('subagent-unauthorized', child.sessionId, `session ${child.sessionId} is not a resident continuable child`);
  }
  if (activation.disposing) throw new ChildError('subagent-activation-closing', child.sessionId, `child ${child.sessionId} is closing; the report was not delivered`);
  const parent = port.runtime.liveAgent(activation.parentSessionId);
  if (!parent) {
    throw new ChildError('subagent-parent-unavailable', child.sessionId, 'the direct parent is not live; the report was not delivered');
  }
  const message = port.message(reportText(child.sessionId, output), { kind: 'subagent-report', form: 'relay', senderSessionId: child.sessionId });
  // provenance: the report is caused by the child session (its latest event), named by its stream
  const last = child.events.at(-1);
  const metadata = { ...(last ? { causationId: last.id } : {}), causationStream: child.sessionId };
  const actor = { id: child.sessionId, kind: 'child-session' as const };
  if (port.reportDelivery === 'quiet') return parent.inject(message, { metadata, actor });
  port.registry.acceptFor(parent, message.id);
  return parent.steer(message, { metadata, actor });
};
