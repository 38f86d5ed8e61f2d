import type { SubagentEndData, SubagentStartData } from '../../domain/children/subagent-events.js';
import { abnormalRunEnd, isRunOpen } from '../../domain/children/child-runs.js';
import type { Agent } from '../agent.js';
import type { Activation } from './activation.js';
import type { ChildrenPort } from './children-port.js';

/**
 * The `subagent/start` data of a continuable child's activation epoch: the identity its `subagent/end` repeats, and
 * where the epoch begins in the child's log.
 */
export const epochStart = (a: Activation): SubagentStartData => ({
  runId: a.runId,
  childSessionId: a.childSessionId,
  mode: 'continuable',
  epoch: a.epoch,
  childSeq: a.epochStartSeq,
});

/** Registers a resident activation and logs its `subagent/start` edge in the parent's log. */
export const activate = (
  port: Pick<ChildrenPort, 'ids' | 'registry'>,
  parent: Agent,
  child: Agent,
  epoch: number,
  epochStartSeq: number,
  label: string,
): Activation => {
  const runId = port.ids.next();
  const activation = port.registry.register(parent, child, { epoch, runId, epochStartSeq, label });
  parent.recordChildEvent('subagent/start', epochStart(activation));
  return activation;
};

/** Undoes an activation whose start failed before acceptance: no activation, no ownership, `subagent/end {abnormal}`. */
export const rollback = (port: Pick<ChildrenPort, 'registry'>, parent: Agent, activation: Activation): void => {
  port.registry.deactivate(activation);
  port.registry.disown(activation);
  parent.recordChildEvent('subagent/end', abnormalRunEnd(epochStart(activation)));
};

/**
 * Logs the end of a child's run in its parent: in the live parent at once (in the same tick as the settlement
 * notice before it), unless that run is closed already; through the store (`Runtime.closeChildRun`) when the parent
 * is gone, or its log closed under the settlement (a parent being disposed). A failure there is logged: the parent's
 * next resume closes the run from the child's log.
 */
export const recordRunEnd = async (port: Pick<ChildrenPort, 'runtime' | 'logger'>, parentSessionId: string, end: SubagentEndData): Promise<void> => {
  const parent = port.runtime.liveAgent(parentSessionId);
  if (parent) {
    if (!isRunOpen(parent.events, end.runId)) return;
    try {
      parent.recordChildEvent('subagent/end', end);
      return;
    } catch (e) {
      port.logger.warn(`child ${end.childSessionId}: the end of its run could not be logged in live ${parentSessionId}; it goes through the store`, e);
    }
  }
  await port.runtime
    .closeChildRun(parentSessionId, end)
    .catch((e) => port.logger.warn(`child ${end.childSessionId}: the end of its run was not recorded in ${parentSessionId}; its next resume records it`, e));
};
