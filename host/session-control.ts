import * as E from 'fp-ts/lib/Either.js';
import { isQueueEditError } from '../domain/queue-edit.js';
import { isMessageTooLargeError } from '../runtime/errors.js';
import { principalActor } from './actor.js';
import { HostError } from './errors.js';
import type { CallContext } from './host-types.js';
import type { LiveSession } from './live-session.js';
import { refuseIfOwnedElsewhere } from './ownership-checks.js';
import type { SessionOwnership } from './ports/ownership.js';
import { toContentBlocks } from './prompt.js';
import type { HostRequest, HostResult } from './schemas.js';

/** What the queue edits, cancel and wake need of the host: its live sessions, resolution and the ownership port. */
export interface SessionControlPort {
  /** The session live on this host, or undefined. */
  readonly live: (sessionId: string) => LiveSession | undefined;
  /** The live session, resumed on demand (concurrent callers for one id share one resume). */
  readonly resolve: (sessionId: string) => Promise<LiveSession>;
  readonly ownership: SessionOwnership;
}

/**
 * `session.updateQueue`: edits, removes or steers a queued item of a session live on this host (never resumed for
 * it); the claim wins every race. Refusals in this order: a non-text edit, the session not live here (or owned
 * elsewhere), the item in neither list, a steer that is not available.
 */
export const sessionUpdateQueue = async (port: SessionControlPort, request: HostRequest<'session.updateQueue'>, ctx: CallContext): Promise<HostResult<'session.updateQueue'>> => {
  const { action, itemId } = request;
  if (action.kind === 'edit' && action.content.some((b) => b.type !== 'text')) {
    throw new HostError('attachment-error', 'a queued item can be edited with text only', { reason: 'QUEUE_EDIT_NON_TEXT' });
  }
  const session = port.live(request.sessionId);
  if (!session) {
    await refuseIfOwnedElsewhere(port.ownership, request.sessionId);
    throw new HostError('queue-item-not-found', `no live session ${request.sessionId} holds ${itemId}`, { itemId });
  }
  const queue = session.agent.queue;
  const by = { actor: principalActor(ctx.principal) };
  const result = action.kind === 'edit' ? queue.edit(itemId, toContentBlocks(action.content), by) : action.kind === 'remove' ? queue.remove(itemId, by) : queue.steer(itemId, by);
  if (E.isLeft(result)) {
    const e = result.left;
    if (isQueueEditError(e) && e.code === 'steer-unavailable') throw new HostError('steer-unavailable', e.message, { itemId });
    if (isQueueEditError(e) && e.code === 'queue-edit-non-text') throw new HostError('attachment-error', e.message, { reason: 'QUEUE_EDIT_NON_TEXT' });
    if (isMessageTooLargeError(e)) throw new HostError('message-too-large', `item ${itemId}: ${e.message}`, { limit: e.limit, size: e.size });
    throw new HostError('queue-item-not-found', e.message, { itemId });
  }
  return { accepted: true };
};

/** `session.cancel`: stops the active turn of a session live on this host; queued work is kept, parked. */
export const sessionCancel = async (port: SessionControlPort, request: HostRequest<'session.cancel'>, ctx: CallContext): Promise<HostResult<'session.cancel'>> => {
  const session = port.live(request.sessionId);
  if (!session) {
    await refuseIfOwnedElsewhere(port.ownership, request.sessionId);
    throw new HostError('session-not-found', `session ${request.sessionId} is not live on this host`, { sessionId: request.sessionId });
  }
  session.agent.cancel({ kind: 'user' }, { keepInbox: true, actor: principalActor(ctx.principal) });
  return { accepted: true };
};

/** `session.wake`: runs parked work without a new message (the session resumed on demand); `woke: false` when nothing is pending. */
export const sessionWake = async (port: SessionControlPort, request: HostRequest<'session.wake'>, ctx: CallContext): Promise<HostResult<'session.wake'>> => {
  const session = await port.resolve(request.sessionId);
  return { accepted: true, woke: session.agent.wake({ actor: principalActor(ctx.principal) }) };
};
