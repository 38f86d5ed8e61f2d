import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent } from '../../domain/events.js';
import { queueView } from '../../domain/queue-view.js';
import { initialSessionState, stepSession, type SessionState } from '../../domain/session-fold.js';
import { loadSession } from '../load-session.js';
import type { EventStore } from '../ports/event-store.js';
import type { KeyStore } from '../ports/key-store.js';
import { isRuntimeError } from '../errors.js';
import { HostError } from './errors.js';
import type { LiveSession } from './live-session.js';
import type { HostResult, QueueRow } from './schemas.js';

/** A session's events and folded state: the live log when the session is live here, else the store (read only). */
export const readSession = async (
  store: EventStore,
  sessionId: string,
  live: LiveSession | undefined,
  keys: KeyStore | null = null,
): Promise<{ events: readonly LogEvent[]; state: SessionState | null }> => {
  if (live) return { events: live.agent.events, state: null };
  try {
    // sealed content opened with the runtime's keys: readable, or `[erased]` once its key is destroyed
    return await loadSession(store, sessionId, keys);
  } catch (e) {
    if (isRuntimeError(e) && e.code === 'session-not-found') throw new HostError('session-not-found', `no session ${sessionId}`, { sessionId });
    throw e;
  }
};

/** `session.history`: a page of durable events, each `user/message` with its class (a fold of the log from its start). */
export const historyPage = (events: readonly LogEvent[], request: { readonly after?: number | undefined; readonly limit?: number | undefined }): HostResult<'session.history'> => {
  const after = request.after ?? -1;
  const limit = request.limit ?? 200;
  const end = Math.min(events.length, after + 1 + limit);
  let state = initialSessionState();
  const page: HostResult<'session.history'>['events'] = [];
  for (let i = 0; i < end; i++) {
    const event = events[i]!;
    const step = stepSession(state, event);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
    if (i > after) page.push({ event: event as never, ...(step.right.messageClass ? { class: step.right.messageClass } : {}) });
  }
  return { events: page, lastSeq: events.length - 1, nextAfter: end < events.length ? end - 1 : null };
};

/** The queue rows of a folded inbox (no claimed rows: a cold session has no steering handoff in flight). */
export const queueRowsOf = (state: SessionState): QueueRow[] =>
  queueView(state.inbox).map((i) => ({ id: i.id, placement: i.placement, message: i.message as unknown as QueueRow['message'] }));
