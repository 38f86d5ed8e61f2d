import { ChildError } from '../../domain/children/child-errors.js';
import { runEnd } from '../../domain/children/child-runs.js';
import { settlementOf } from '../../domain/children/settlement.js';
import type { ChildMode, SubagentStartData } from '../../domain/children/subagent-events.js';
import { InvalidMessageError } from '../../domain/errors.js';
import { parseContent } from '../../domain/message.js';
import type { Agent } from '../agent.js';
import type { Activation } from './activation.js';
import { descriptorOf } from './child-setup.js';
import type { OneShotResult, StartChildSpec, StartedChild } from './child-options.js';
import { cancelled, headerOf, type ChildrenPort } from './children-port.js';
import { activate, recordRunEnd, rollback } from './epoch-edges.js';

/**
 * Admission of a new child, before anything is created: the runtime is not draining, the parent is the live entry of
 * its session, the delegation depth is within the cap, the child id is free (live or stored), the signal has not
 * aborted and the content parses. Returns the child's id, depth and descriptor (a snapshot taken before any await).
 */
const admitStart = async (port: ChildrenPort, parent: Agent, spec: StartChildSpec, mode: ChildMode) => {
  const fallback = spec.childSessionId ?? 'a new child';
  if (port.draining()) throw new ChildError('subagent-delivery-unavailable', fallback, 'the runtime is draining; no child can start');
  if (port.runtime.liveAgent(parent.sessionId) !== parent) {
    throw new ChildError('subagent-parent-unavailable', fallback, `session ${parent.sessionId} is not live in this runtime`);
  }
  const parentHeader = headerOf(parent.events);
  const depth = (parentHeader.delegationDepth ?? 0) + 1;
  if (depth > port.maxDepth) throw new ChildError('subagent-depth-exceeded', fallback, `delegation depth ${depth} exceeds the cap of ${port.maxDepth}`);
  const descriptor = descriptorOf(spec, mode); // a snapshot taken before any await
  const childSessionId = spec.childSessionId ?? port.ids.next();
  const taken = port.registry.get(childSessionId) !== undefined || port.runtime.liveAgent(childSessionId) !== undefined;
  if (taken || (spec.childSessionId !== undefined && (await port.runtime.store.revision(childSessionId)) !== 'no_stream')) {
    throw new ChildError('subagent-duplicate-child', childSessionId, `session ${childSessionId} already exists`);
  }
  if (spec.signal?.aborted) throw cancelled(childSessionId);
  const content = parseContent(spec.content);
  if (!content.ok) throw new InvalidMessageError('content', content.problem);
  return { childSessionId, depth, descriptor };
};

/** `ChildManager.startContinuable`: create, describe, activate and submit under the child's lock; roll back on failure. */
export const startContinuableChild = async (port: ChildrenPort, parent: Agent, spec: StartChildSpec): Promise<StartedChild> => {
  const { childSessionId, depth, descriptor } = await admitStart(port, parent, spec, 'continuable');
  const message = port.message(spec.content, { kind: 'user' });
  return port.lock.run(childSessionId, async () => {
    let child: Agent | undefined;
    let activation: Activation | undefined;
    if (spec.signal?.aborted) throw cancelled(childSessionId);
    try {
      child = port.runtime.createSession({
        sessionId: childSessionId,
        kind: 'continuable',
        parentSession: parent.sessionId,
        origin: 'subagent',
        delegationDepth: depth,
        actor: { id: parent.sessionId, kind: 'parent-session' },
        ...port.setupOf(descriptor, childSessionId),
      });
      child.recordChildEvent('subagent/descriptor', descriptor);
      activation = activate(port, parent, child, 1, 0, descriptor.label);
      if (spec.signal?.aborted) throw cancelled(childSessionId);
      port.registry.accept(activation, message.id);
      child.followup(message, { actor: { id: parent.sessionId, kind: 'parent-session' } });
      return { childSessionId, messageId: message.id };
    } catch (e) {
      if (activation) rollback(port, parent, activation);
      await child?.dispose().catch((d) => port.logger.warn(`child ${childSessionId}: dispose after a failed start`, d));
      throw e;
    }
  });
};

/** `ChildManager.start`: a one-shot child run to its end, its epoch logged in the parent (live, or through the store when it is gone). */
export const runOneShot = async (port: ChildrenPort, parent: Agent, spec: StartChildSpec): Promise<OneShotResult> => {
  const { childSessionId, depth, descriptor } = await admitStart(port, parent, spec, 'one-shot');
  const message = port.message(spec.content, { kind: 'user' });
  const child = port.runtime.createSession({
    sessionId: childSessionId,
    kind: 'one-shot',
    parentSession: parent.sessionId,
    origin: 'subagent',
    delegationDepth: depth,
    actor: { id: parent.sessionId, kind: 'parent-session' },
    ...port.setupOf(descriptor, childSessionId),
  });
  const start: SubagentStartData = { runId: port.ids.next(), childSessionId, mode: 'one-shot', epoch: 1, childSeq: 0 };
  child.recordChildEvent('subagent/descriptor', descriptor);
  parent.recordChildEvent('subagent/start', start);
  const byParent = { actor: { id: parent.sessionId, kind: 'parent-session' as const } };
  const onAbort = () => child.cancel({ kind: 'parent' }, byParent);
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (spec.signal?.aborted) onAbort();
    else child.followup(message, byParent);
    await child.whenIdle();
  } finally {
    spec.signal?.removeEventListener('abort', onAbort);
  }
  const account = settlementOf(childSessionId, child.events);
  await child.dispose();
  // the parent's live agent now (it may have been resumed meanwhile), or its log through the store when it is gone
  await recordRunEnd(port, parent.sessionId, runEnd(start, account));
  return { childSessionId, messageId: message.id, stopReason: account.stopReason, text: account.closingText };
};
