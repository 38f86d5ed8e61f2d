import * as E from 'fp-ts/lib/Either.js';
import type { MessageId } from '../../domain/brand.js';
import { authoriseDelivery, authoriseInterrupt, type InterruptAuthority } from '../../domain/children/child-authorisation.js';
import { resumableDescriptor } from '../../domain/children/child-descriptor.js';
import { ChildError } from '../../domain/children/child-errors.js';
import type { SessionCreatedData } from '../../domain/events.js';
import type { ContentBlock } from '../../domain/message.js';
import type { Agent } from '../agent.js';
import { RuntimeError } from '../errors.js';
import { loadSession, type LoadedSession } from '../load-session.js';
import type { Activation } from './activation.js';
import type { DeliveryOptions } from './child-options.js';
import type { ActorOption } from '../provenance.js';
import { cancelled, headerOf, type ChildrenPort } from './children-port.js';
import { activate } from './epoch-edges.js';

const unavailable = (childSessionId: string): ChildError =>
  new ChildError('subagent-delivery-unavailable', childSessionId, `the runtime is draining; ${childSessionId} takes no deliveries`);

const authorise = (port: ChildrenPort, parent: Agent, childSessionId: string, header: SessionCreatedData): void => {
  const decided = authoriseDelivery({ sessionId: parent.sessionId, isLiveEntry: port.runtime.liveAgent(parent.sessionId) === parent }, childSessionId, header);
  if (E.isLeft(decided)) throw decided.left;
};

/** Cold resume of an absent child: inspect, authorise before folding, fold its own descriptor, resume, activate. */
const coldResume = async (port: ChildrenPort, parent: Agent, childSessionId: string): Promise<Activation> => {
  let loaded: LoadedSession;
  try {
    loaded = await loadSession(port.runtime.store, childSessionId, port.runtime.keyStore);
  } catch (e) {
    throw new ChildError('subagent-not-resumable', childSessionId, `child ${childSessionId} cannot be inspected (${e instanceof RuntimeError ? e.code : 'store error'}); do not retry with this id`);
  }
  if (port.draining()) throw unavailable(childSessionId);
  const header = headerOf(loaded.events);
  authorise(port, parent, childSessionId, header);
  const descriptor = resumableDescriptor(childSessionId, header, loaded.events);
  if (E.isLeft(descriptor)) throw descriptor.left;
  const agent = await port.runtime.resume(childSessionId, port.setupOf(descriptor.right, childSessionId));
  const epoch = parent.events.filter((e) => e.type === 'subagent/start' && (e.data as { childSessionId: string }).childSessionId === childSessionId).length + 1;
  return activate(port, parent, agent, epoch, loaded.events.length, descriptor.right.label);
};

/**
 * `ChildManager.followup`, under the child's lock: wait out a disposal that began, cold-resume an absent child, then
 * authorise once more with no await before the send, record the accepted id and submit.
 */
export const deliverFollowup = (
  port: ChildrenPort,
  parent: Agent,
  childSessionId: string,
  content: string | readonly ContentBlock[],
  options: DeliveryOptions,
): Promise<MessageId> => {
  const message = port.message(content, options.source ?? { kind: 'user' });
  return port.lock.run(childSessionId, async () => {
    if (port.draining()) throw unavailable(childSessionId);
    if (options.signal?.aborted) throw cancelled(childSessionId);
    let activation = port.registry.get(childSessionId);
    if (activation?.disposing) {
      await activation.disposing;
      activation = port.registry.get(childSessionId);
    }
    if (options.signal?.aborted) throw cancelled(childSessionId);
    if (!activation) activation = await coldResume(port, parent, childSessionId);
    if (options.signal?.aborted) {
      // resumed, then cancelled before acceptance: nothing was delivered; the empty epoch settles as usual
      queueMicrotask(() => void port.settle(childSessionId));
      throw cancelled(childSessionId);
    }
    // the final authorisation, with no await between it and the send
    authorise(port, parent, childSessionId, headerOf(activation.agent.events));
    port.registry.accept(activation, message.id);
    activation.agent.followup(message, { actor: options.actor ?? { id: parent.sessionId, kind: 'parent-session' } });
    return message.id;
  });
};

/** `ChildManager.interrupt`: authorise against the resident, non-disposing activation, then cancel keeping the inbox. */
export const interruptChild = (port: Pick<ChildrenPort, 'registry'>, childSessionId: string, authority: InterruptAuthority, actor?: ActorOption): boolean => {
  const activation = port.registry.get(childSessionId);
  const target = activation && !activation.disposing ? { childSessionId, parentSession: activation.parentSessionId, ancestry: activation.ancestry } : null;
  const decided = authoriseInterrupt(authority, childSessionId, target);
  if (E.isLeft(decided)) throw decided.left;
  if (!decided.right || !activation) return false;
  const by = actor ?? (authority.kind === 'ancestor' ? { id: authority.callerSessionId, kind: 'parent-session' as const } : undefined);
  activation.agent.cancel({ kind: authority.kind === 'user' ? 'user' : 'parent' }, { keepInbox: true, ...(by !== undefined ? { actor: by } : {}) });
  return true;
};
