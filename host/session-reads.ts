import * as E from 'fp-ts/lib/Either.js';
import type { LogEvent, SessionCreatedData } from '../domain/events.js';
import { queueView } from '../domain/queue-view.js';
import { foldSession, initialSessionState, stepSession, type SessionState } from '../domain/session-fold.js';
import { loadSession } from '../runtime/load-session.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';
import { isRuntimeError } from '../runtime/errors.js';
import { isStoreCorruptError } from '../runtime/ports/store-errors.js';
import type { SessionCatalog } from './catalog.js';
import { HostError } from './errors.js';
import { historyFromStore } from './history-range.js';
import { wholeLiveLog } from './live-log.js';
import type { LiveSession } from './live-session.js';
import type { HostRequest, HostResult, QueueRow } from './schemas.js';

/** What the session reads need of the host: its store, the runtime's keys, its live sessions and its catalog. */
export interface SessionReadPort {
  readonly store: EventStore;
  /** Opens sealed content (none: the store holds it in the clear). */
  readonly keyStore: KeyStore | null;
  /** The session live on this host, or undefined. */
  readonly live: (sessionId: string) => LiveSession | undefined;
  readonly catalog: SessionCatalog;
}

/** A session's events and folded state: the live log when the session is live here, else the store (read only). */
export const readSession = async (
  store: EventStore,
  sessionId: string,
  live: LiveSession | undefined,
  keys: KeyStore | null = null,
  /** Told when the log could not be read because the store is damaged there (the catalog lists the session broken). */
  onDamage?: (sessionId: string) => void,
): Promise<{ events: readonly LogEvent[]; state: SessionState | null }> => {
  if (live) return { events: await wholeLiveLog(store, live.agent, keys), state: null };
  try {
    // sealed content opened with the runtime's keys: readable, or `[erased]` once its key is destroyed
    return await loadSession(store, sessionId, keys);
  } catch (e) {
    if (isRuntimeError(e) && e.code === 'session-not-found') throw new HostError('session-not-found', `no session ${sessionId}`, { sessionId });
    if (isStoreCorruptError(e) || isStoreCorruptError((e as { cause?: unknown } | null)?.cause)) onDamage?.(sessionId);
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

/** The session's `session/created` data from the store, or null when the stream is empty. */
export const readHeader = async (store: EventStore, sessionId: string): Promise<SessionCreatedData | null> => {
  for await (const e of store.read(sessionId, { maxCount: 1 })) return e.type === 'session/created' ? (e.data as SessionCreatedData) : null;
  return null;
};

/**
 * `session.list`: a page of the catalog (the store's session catalog when it keeps one, else the host's, refreshed
 * from the store first), oldest first or newest first as `order` says, filtered, each marked live when attached
 * here; `next` (resuming in that order) when `limit` was given.
 */
export const sessionList = async (port: SessionReadPort, request: HostRequest<'session.list'> = {}): Promise<HostResult<'session.list'>> => {
  const page = await port.catalog.page({ after: request.after, order: request.order, limit: request.limit, kind: request.kind, parentSession: request.parentSessionId });
  return {
    sessions: page.rows.map((e) => {
      const live = port.live(e.sessionId);
      return {
        sessionId: e.sessionId,
        kind: e.kind,
        createdAt: e.createdAt,
        ...(e.parentSession !== undefined ? { parentSessionId: e.parentSession } : {}),
        live: live !== undefined,
        running: live?.agent.status === 'running',
        ...(e.lastSeq !== undefined ? { lastSeq: live ? live.lastSeq : e.lastSeq } : {}),
        ...(e.lastActivity !== undefined ? { lastActivity: e.lastActivity } : {}),
        ...(e.broken ? { broken: true as const } : {}),
      };
    }),
    ...(request.limit !== undefined ? { next: page.next } : {}),
  };
};

/** `session.get`: the session's summary, from its live agent when attached here, else folded from the store. */
export const sessionGet = async (port: SessionReadPort, request: HostRequest<'session.get'>): Promise<HostResult<'session.get'>> => {
  const live = port.live(request.sessionId);
  if (live) {
    const state = live.agent.windowState() ?? foldSession(live.agent.events).state;
    return summaryOf(request.sessionId, live.agent.header, state.turns, {
      live: true,
      running: live.agent.status === 'running',
      lastSeq: live.lastSeq,
      queue: live.queue ? (live.queue.items as never) : [],
    });
  }
  const { events, state } = await readSession(port.store, request.sessionId, undefined, port.keyStore, (id) => port.catalog.markBroken(id));
  return summaryOf(request.sessionId, state!.created!, state!.turns, { live: false, running: false, lastSeq: events.length - 1, queue: queueRowsOf(state!) });
};

/** A `session.get` result: the header's and the turns' fields around what the live agent or the store says. */
const summaryOf = (
  sessionId: string,
  created: SessionCreatedData,
  turns: { readonly lastTurn: number; readonly openTurn: { readonly turn: number } | null },
  rest: { readonly live: boolean; readonly running: boolean; readonly lastSeq: number; readonly queue: HostResult<'session.get'>['queue'] },
): HostResult<'session.get'> => ({
  sessionId,
  kind: created.kind,
  createdAt: created.createdAt,
  ...(created.parentSession !== undefined ? { parentSessionId: created.parentSession } : {}),
  live: rest.live,
  running: rest.running,
  lastSeq: rest.lastSeq,
  lastTurn: turns.lastTurn,
  openTurn: turns.openTurn?.turn ?? null,
  queue: rest.queue,
});

/** `session.history`: a page of the session's log (the live one when attached here, else read by range from the store). */
export const sessionHistory = async (port: SessionReadPort, request: HostRequest<'session.history'>): Promise<HostResult<'session.history'>> => {
  const live = port.live(request.sessionId);
  // a session not live here is read by range (history-range.ts): the page, not the whole log
  if (!live) return historyFromStore(port, request);
  const agent = live.agent;
  if (agent.base === 0) return historyPage(agent.events, request);
  // a live agent resumed from a fold snapshot: a page the store holds whole is read by range there (its classes
  // come from the same fold); a page reaching the events not yet durable folds the whole log
  const end = (request.after ?? -1) + 1 + (request.limit ?? 200);
  if (end <= agent.durableCount) {
    const page = await historyFromStore(port, request);
    const lastSeq = agent.length - 1;
    return { ...page, lastSeq, nextAfter: page.nextAfter ?? (end - 1 < lastSeq ? end - 1 : null) };
  }
  return historyPage(await wholeLiveLog(port.store, agent, port.keyStore), request);
};
