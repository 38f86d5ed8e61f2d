import type { SubagentStartData } from '../../domain/children/subagent-events.js';
import { abnormalRunEnd } from '../../domain/children/child-runs.js';
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
