import * as E from 'fp-ts/lib/Either.js';
import { hasPending } from '../domain/inbox/inbox-state.js';
import { parseEvent } from '../domain/parse-event.js';
import { actorActionsOf } from '../domain/actor-actions.js';
import { initialMessageFactState, stepMessageFactRecords, type MessageFactState } from '../domain/message-facts.js';
import type { ChainStatus } from '../domain/event-chain.js';
import type { EventStore, RecordedEvent } from '../runtime/ports/event-store.js';
import { catalogPageOf, hasSessionCatalog, type CatalogedSession, type SessionCatalogPage, type SessionCatalogQuery } from '../runtime/ports/session-catalog.js';
import { createSessionVerifier } from '../formats/chain/verify-session.js';
import { listStreams, storeEnvelopes } from './log-sources.js';

/** One session as the sessions use case lists it (`steerlog sessions`). */
export interface SessionSummary {
  readonly session: string;
  /** session/created's createdAt, or null when the log does not start with one. */
  readonly createdAt: number | null;
  readonly events: number;
  readonly lastSeq: number | null;
  readonly lastTime: number | null;
  readonly turns: number;
  /** At the end of the log: a turn still open (a crash or a running session), pending input, or idle. */
  readonly status: 'idle' | 'open-turn' | 'pending-work' | 'invalid';
  /** The first invalid event, when the fold stopped. */
  readonly invalidAt: number | null;
  readonly chain: ChainStatus | 'unreadable';
  /** Who created (or forked) the session: `session/created`'s actor, null when it names none. */
  readonly createdBy: string | null;
  /** Every actor of an admission or control action (`actorActionsOf`), in order of first appearance. */
  readonly actors: readonly string[];
  /** How many admissions and control actions name no actor (a log written before actors were recorded). */
  readonly unattributed: number;
}

/** Folds and verifies one stream in one streaming pass. */
export const summarizeSession = async (store: EventStore, stream: string): Promise<SessionSummary> => {
  const verifier = createSessionVerifier(stream);
  let facts: MessageFactState = initialMessageFactState();
  let invalidAt: number | null = null;
  let createdBy: string | null = null;
  let seedLength: number | undefined;
  const actors = new Set<string>();
  let unattributed = 0;
  let events = 0;
  let lastTime: number | null = null;
  for await (const raw of storeEnvelopes(store, stream)) {
    verifier.push(raw);
    events++;
    lastTime = raw.time;
    if (invalidAt !== null) continue;
    const parsed = parseEvent(raw, { expectedSeq: facts.session.nextSeq });
    // the actions need no `turn-ended` fact: a turn's end stays one record
    const step = E.isLeft(parsed) ? parsed : stepMessageFactRecords(facts, parsed.right);
    if (E.isLeft(step) || E.isLeft(parsed)) {
      invalidAt = raw.seq;
      continue;
    }
    facts = step.right.state;
    const event = parsed.right;
    if (event.seq === 0 && event.type === 'session/created') seedLength = (event.data as { seedLength?: number }).seedLength;
    for (const a of actorActionsOf(event, step.right.facts, seedLength)) {
      if (a.kind === 'created' || a.kind === 'forked') createdBy = a.actor;
      if (a.actor === null) unattributed++;
      else actors.add(a.actor);
    }
  }
  const state = facts.session;
  const status: SessionSummary['status'] =
    invalidAt !== null ? 'invalid' : state.turns.openTurn ? 'open-turn' : hasPending(state.inbox) ? 'pending-work' : 'idle';
  return {
    session: stream,
    createdAt: state.created?.createdAt ?? null,
    events,
    lastSeq: events === 0 ? null : events - 1,
    lastTime,
    turns: state.turns.lastTurn,
    status,
    invalidAt,
    chain: verifier.result().status,
    createdBy,
    actors: [...actors],
    unattributed,
  };
};

/** The page `listSessionPage` asks for: from the store's session catalog, else from its global order. */
const pageOfStreams = async (store: EventStore, query: SessionCatalogQuery): Promise<SessionCatalogPage> => {
  if (hasSessionCatalog(store)) return store.listSessions({ ...query, sessionsOnly: true });
  const rows: CatalogedSession[] = [];
  for (const stream of await listStreams(store)) {
    let first: RecordedEvent | undefined;
    for await (const e of store.read(stream, { maxCount: 1 })) first = e;
    if (first?.type !== 'session/created') continue;
    const d = first.data as { createdAt?: number; kind?: string; parentSession?: string };
    rows.push({ sessionId: stream, createdAt: d.createdAt ?? first.time, kind: d.kind ?? null, lastSeq: -1, lastActivity: first.time, status: 'idle', chainHead: null });
  }
  return catalogPageOf(rows, query);
};

/**
 * The sessions use case: every session of an opened store, in the order of its first event, each with its state at
 * the end of its log and its chain status (one streaming pass per session).
 */
export const listSessions = async (store: EventStore): Promise<SessionSummary[]> => {
  const found: SessionSummary[] = [];
  for (const stream of await listStreams(store)) found.push(await summarizeSession(store, stream));
  return found;
};

/** One page of {@link listSessionPage}: its sessions summarized, and the cursor of the next page (null after the last). */
export interface SessionSummaryPage {
  readonly sessions: readonly SessionSummary[];
  readonly next: string | null;
}

/**
 * The sessions use case a page at a time (`limit`, `after`, `order`, `kind`): the page comes from the store's session
 * catalog when it keeps one (only the page's sessions are then read), else from its global order (paged as the
 * catalog would: catalogPageOf); each session of the page is summarized as {@link listSessions} summarizes it.
 */
export const listSessionPage = async (store: EventStore, query: SessionCatalogQuery): Promise<SessionSummaryPage> => {
  const page = await pageOfStreams(store, query);
  const sessions: SessionSummary[] = [];
  for (const row of page.sessions) sessions.push(await summarizeSession(store, row.sessionId));
  return { sessions, next: page.next };
};

/** Is some session's log invalid or its chain broken (or unreadable)? `steerlog sessions` then exits 1. */
export const someSessionFails = (sessions: readonly SessionSummary[]): boolean =>
  sessions.some((s) => s.status === 'invalid' || s.chain === 'broken' || s.chain === 'unreadable');
