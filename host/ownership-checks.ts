import { HostError } from './errors.js';
import type { SessionOwner, SessionOwnership } from './ports/ownership.js';

/** `agent-busy {reason: 'owned-elsewhere', owner}`: the session runs on another host, reachable as `owner` says. */
const ownedElsewhere = (sessionId: string, owner: SessionOwner): HostError =>
  new HostError('agent-busy', `session ${sessionId} runs on host ${owner.hostId}`, { reason: 'owned-elsewhere', owner: { ...owner } });

/** Takes the session's lease for this host; refused `agent-busy {owner}` when another host holds it. */
export const ownHere = async (ownership: SessionOwnership, sessionId: string): Promise<void> => {
  const acquired = await ownership.acquire(sessionId);
  if (acquired.kind === 'elsewhere') throw ownedElsewhere(sessionId, acquired.owner);
};

/** Refuses `agent-busy {owner}` when another host holds a live lease on the session (takes nothing). */
export const refuseIfOwnedElsewhere = async (ownership: SessionOwnership, sessionId: string): Promise<void> => {
  const owner = await ownership.holder(sessionId);
  if (owner && owner.hostId !== ownership.self.hostId) throw ownedElsewhere(sessionId, owner);
};
