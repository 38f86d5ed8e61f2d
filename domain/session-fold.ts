import * as E from 'fp-ts/lib/Either.js';
import { initialConsumedWorkState, evolveConsumedWork, type ConsumedWorkState } from './consumed-work.js';
import { ImpossibleEventError, type DomainError } from './errors.js';
import { isKnownEvent, type InboxNotification, type InboxSplicedData, type LogEvent, type SessionCreatedData } from './events.js';
import { classifyMessage, classifySplice, initialClassificationState, type ClassificationState, type MessageClass } from './history-classification.js';
import { applySplice } from './inbox/inbox-evolve.js';
import { notificationsOfSplice } from './inbox/inbox-notifications.js';
import { initialInboxState, type InboxState } from './inbox/inbox-state.js';
import { evolveTurns, initialTurnFoldState, type TurnFoldState, type TurnRecord } from './turns.js';

/**
 * The whole session log folded at once: the Inbox (after the seed boundary), the turns, consumed work (over the
 * owned suffix), and history classification. Every field is a persistent value; an old state never changes.
 */
export interface SessionState {
  /** The seq the next event must carry. */
  readonly nextSeq: number;
  readonly created: SessionCreatedData | null;
  /** seq of the `session/end-seed` that closes this session's own fork seed, once seen. */
  readonly seedEndSeq: number | null;
  /** Where `session/end-seed` restarts the inbox: this session's boundary and those of forks nested in its seed. */
  readonly inboxResets: readonly number[];
  readonly inbox: InboxState;
  readonly turns: TurnFoldState;
  readonly consumed: ConsumedWorkState;
  readonly classification: ClassificationState;
  /** Ids claimed by the open turn, in claim order. */
  readonly openTurnClaimed: readonly string[];
}

/** The whole-session fold's state before any event. */
export const initialSessionState = (): SessionState => ({
  nextSeq: 0,
  created: null,
  seedEndSeq: null,
  inboxResets: [],
  inbox: initialInboxState(),
  turns: initialTurnFoldState(),
  consumed: initialConsumedWorkState(),
  classification: initialClassificationState(),
  openTurnClaimed: [],
});

/** What one event did, besides the new state. */
export interface SessionStep {
  readonly state: SessionState;
  /** The live notifications this event implies (none inside a fork's seed). */
  readonly notifications: readonly InboxNotification[];
  /** For a user/message: its class. */
  readonly messageClass?: MessageClass;
  /** For a turn/end: the closed turn with the ids it claimed. */
  readonly closedTurn?: TurnRecord & { readonly claimed: readonly string[] };
}

/** Is `seq` inside a fork's inherited seed (after the session's own session/created, up to seedLength)? */
export const inSeed = (state: SessionState, seq: number): boolean =>
  state.created?.seedLength !== undefined && seq >= 1 && seq <= state.created.seedLength;

/** Does this state still replay inherited history (a fork whose end-seed has not been reached)? */
const owned = (state: SessionState, seq: number): boolean => !inSeed(state, seq) && !(seq === 0);

/**
 * One event into the session state, or a typed refusal: seq out of order, session/created not first,
 * a fork boundary that is missing or inside an open turn, a splice that does not fit, an impossible turn event.
 */
export const stepSession = (state: SessionState, event: LogEvent): E.Either<DomainError, SessionStep> => {
  const impossible = (reason: string) => E.left(new ImpossibleEventError(event.seq, event.type, reason));
  if (event.seq !== state.nextSeq) return impossible(`expected seq ${state.nextSeq}`);
  if (event.seq === 0 && event.type !== 'session/created') return impossible('the first event of a session is session/created');
  const seedLength = state.created?.seedLength;
  if (seedLength !== undefined && event.seq === seedLength + 1 && event.type !== 'session/end-seed') {
    return impossible(`a fork's seed of ${seedLength} events ends with session/end-seed at seq ${seedLength + 1}`);
  }
  if (event.type === 'session/created' && event.seq !== 0 && !inSeed(state, event.seq)) {
    return impossible('session/created appears only first (or inside an inherited seed)');
  }

  const turns = evolveTurns(state.turns, event);
  if (E.isLeft(turns)) return turns;
  const isOwned = owned(state, event.seq);
  let next: SessionState = {
    ...state,
    nextSeq: state.nextSeq + 1,
    turns: turns.right,
    consumed: isOwned ? evolveConsumedWork(state.consumed, event) : state.consumed,
  };
  let notifications: readonly InboxNotification[] = [];
  if (!isKnownEvent(event)) return E.right({ state: next, notifications });

  switch (event.type) {
    case 'session/created': {
      if (event.seq === 0) next = { ...next, created: event.data };
      // a fork (this session, or an ancestor inherited in the seed) restarts its inbox after its own seed
      const nested = event.data.seedLength;
      if (nested !== undefined) next = { ...next, inboxResets: [...next.inboxResets, event.seq + nested + 1] };
      break;
    }
    case 'session/end-seed':
      if (seedLength !== undefined && event.seq === seedLength + 1) {
        if (state.turns.openTurn) return impossible(`the fork boundary falls inside open turn ${state.turns.openTurn.turn}`);
        next = { ...next, seedEndSeq: event.seq };
      }
      // The child never inherits pending input: its inbox starts empty after the seed.
      if (state.inboxResets.includes(event.seq)) next = { ...next, inbox: initialInboxState() };
      break;
    case 'agent/inbox/spliced': {
      const splice: InboxSplicedData = event.data;
      const applied = applySplice(state.inbox, splice);
      if (E.isLeft(applied)) {
        const e = applied.left;
        return E.left(Object.assign(e, { message: `seq ${event.seq}: ${e.message}`, seq: event.seq }));
      }
      const turn = state.turns.openTurn?.turn ?? state.turns.lastTurn;
      const implied = notificationsOfSplice(state.inbox, splice, turn);
      if (isOwned) notifications = implied;
      const isClaim = splice.removedCount !== undefined && splice.outcome !== 'canceled';
      next = {
        ...next,
        inbox: applied.right,
        classification: classifySplice(state.classification, state.inbox, splice),
        openTurnClaimed: isClaim && state.turns.openTurn ? [...state.openTurnClaimed, ...implied.map((n) => n.message.id)] : state.openTurnClaimed,
      };
      break;
    }
    case 'user/message': {
      const classified = classifyMessage(state.classification, event.data);
      return E.right({ state: { ...next, classification: classified.state }, notifications, messageClass: classified.class });
    }
    case 'turn/start':
      next = { ...next, openTurnClaimed: [] };
      break;
    case 'turn/end': {
      const closed = next.turns.lastClosed!;
      return E.right({ state: { ...next, openTurnClaimed: [] }, notifications, closedTurn: { ...closed, claimed: state.openTurnClaimed } });
    }
    default:
      break;
  }
  return E.right({ state: next, notifications });
};

/** Folds a whole log; stops at the first refusal and reports the state before it. */
export const foldSession = (
  events: Iterable<LogEvent>,
): { readonly state: SessionState; readonly error: (DomainError & { readonly seq?: number }) | null } => {
  let state = initialSessionState();
  for (const e of events) {
    const step = stepSession(state, e);
    if (E.isLeft(step)) return { state, error: Object.assign(step.left, { seq: e.seq }) };
    state = step.right.state;
  }
  return { state, error: null };
};

/** The live notifications derived from the durable log alone. */
export const deriveNotifications = (events: Iterable<LogEvent>): InboxNotification[] => {
  let state = initialSessionState();
  const out: InboxNotification[] = [];
  for (const e of events) {
    const step = stepSession(state, e);
    if (E.isLeft(step)) throw step.left;
    out.push(...step.right.notifications);
    state = step.right.state;
  }
  return out;
};
