import type { Agent } from '../runtime/agent.js';
import { isRuntimeError } from '../runtime/errors.js';
import type { Logger } from '../runtime/logger.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { Runtime } from '../runtime/runtime.js';
import type { SessionCatalog } from './catalog.js';
import { principalActor } from './actor.js';
import { HostError } from './errors.js';
import type { CallContext } from './host-types.js';
import type { LiveSession } from './live-session.js';
import { ownHere } from './ownership-checks.js';
import type { SessionOwnership } from './ports/ownership.js';
import type { HostRequest, HostResult } from './schemas.js';

/** What `session.create` and `session.fork` need of the host: its runtime, store, ownership, live sessions, catalog and ids. */
export interface NewSessionPort {
  readonly runtime: Runtime;
  readonly store: EventStore;
  readonly ownership: SessionOwnership;
  readonly logger: Logger;
  readonly catalog: SessionCatalog;
  /** The session live on this host, or undefined. */
  readonly live: (sessionId: string) => LiveSession | undefined;
  /** Makes an agent live on this host (`created`: it is a new session). */
  readonly attach: (agent: Agent, created: boolean) => LiveSession;
  /** An id for a session the client did not name. */
  readonly newId: () => string;
}

/** Refuses `session-exists {sessionId}` when the id is live here or its stream has any event. */
const ensureFree = async (port: NewSessionPort, sessionId: string): Promise<void> => {
  if (port.live(sessionId) !== undefined || (await port.store.revision(sessionId)) !== 'no_stream') {
    throw new HostError('session-exists', `session ${sessionId} exists`, { sessionId });
  }
};

/** Attaches a new session here and makes its creation durable (refused `internal` when it is not), then catalogs it. */
const attachNew = async (port: NewSessionPort, agent: Agent): Promise<void> => {
  port.attach(agent, true);
  try {
    await agent.checkpoint();
  } catch (e) {
    port.logger.warn(`session ${agent.sessionId}: creation is not durable`, e);
    throw new HostError('internal', `session ${agent.sessionId} could not be stored`, {});
  }
  port.catalog.note(agent.header);
};

/** `session.create`: a new ordinary session (the client's id, else a new one) owned and live here; durable when answered. */
export const sessionCreate = async (port: NewSessionPort, request: HostRequest<'session.create'>, ctx: CallContext): Promise<HostResult<'session.create'>> => {
  const sessionId = request.sessionId ?? port.newId();
  await ensureFree(port, sessionId);
  await ownHere(port.ownership, sessionId);
  const agent = port.runtime.createSession({ sessionId, actor: principalActor(ctx.principal) });
  await attachNew(port, agent);
  return { sessionId };
};

/**
 * `session.fork`: a new session seeded with the parent's first `boundary` events (default all; a parent live here is
 * made durable first), owned and live here; durable when answered.
 */
export const sessionFork = async (port: NewSessionPort, request: HostRequest<'session.fork'>, ctx: CallContext): Promise<HostResult<'session.fork'>> => {
  const parent = port.live(request.sessionId);
  if (parent) await parent.agent.checkpoint();
  const sessionId = request.newSessionId ?? port.newId();
  await ensureFree(port, sessionId);
  await ownHere(port.ownership, sessionId);
  let agent: Agent;
  try {
    agent = await port.runtime.fork(request.sessionId, { sessionId, actor: principalActor(ctx.principal), ...(request.boundary !== undefined ? { boundary: request.boundary } : {}) });
  } catch (e) {
    await port.ownership.release(sessionId);
    if (isRuntimeError(e) && e.code === 'session-not-found') throw new HostError('session-not-found', `no session ${request.sessionId}`, { sessionId: request.sessionId });
    if (isRuntimeError(e) && e.code === 'invalid-fork-boundary') throw new HostError('invalid-fork-boundary', e.message, { boundary: request.boundary });
    throw e;
  }
  await attachNew(port, agent);
  return { sessionId };
};
