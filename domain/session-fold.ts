import * as E from 'fp-ts/lib/Either.js';
import { initialConsumedWorkState, evolveConsumedWork, type ConsumedWorkState } from './consumed-work.js';
import { ImpossibleEventError, type DomainError } from './errors.js';
import { isKnownEvent, type InboxNotification, type InboxSplicedData, type LogEvent, type SessionCreatedData } from './events.js';
import { classifyMessage, classifyMessageInPlace, classifySplice, initialClassificationState, type ClassificationState, type MessageClass } from './history-classification.js';
import { appendAll, appendListItems, emptyAppendList, sealedItems, type AppendList } from './append-list.js';
import { applySpliceRemoving } from './inbox/inbox-evolve.js';
import { notificationsOfRemoval } from './inbox/inbox-notifications.js';
import { initialInboxState, type InboxState } from './inbox/inbox-state.js';
import { messageIds, type UserMessage } from './message.js';
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
  /** Ids claimed by the open turn, in claim order (an append-only list: see {@link openTurnClaimedIds}). */
  readonly openTurnClaimed: AppendList<string>;
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
  openTurnClaimed: emptyAppendList(),
});

/** The ids claimed by the open turn, in claim order, as an array of their own (O(claims)). */
export const openTurnClaimedIds = (state: SessionState): readonly string[] => appendListItems(state.openTurnClaimed);

/** What one event did, besides the new state. */
export interface SessionStep {
  readonly state: SessionState;
  /** The live notifications this event implies (none inside a fork's seed). */
  readonly notifications: readonly InboxNotification[];
  /** For a user/message: its class. */
  readonly messageClass?: MessageClass;
  /** For a turn/end: the closed turn with the ids it claimed. */
  readonly closedTurn?: TurnRecord & { readonly claimed: readonly string[] };
  /**
   * For an agent/inbox/spliced: the messages it removed from its list, in list order (what the list held at
   * `start` before the splice), so a caller never needs the state the splice applied to.
   */
  readonly removed?: readonly UserMessage[];
}

/** Is `seq` inside a fork's inherited seed (after the session's own session/created, up to seedLength)? */
export const inSeed = (state: SessionState, seq: number): boolean =>
  state.created?.seedLength !== undefined && seq >= 1 && seq <= state.created.seedLength;

/** Does this state still replay inherited history (a fork whose end-seed has not been reached)? */
const owned = (state: SessionState, seq: number): boolean => !inSeed(state, seq) && !(seq === 0);

/** Options of {@link stepSession}. */
export interface StepSessionOptions {
  /**
   * Compute the step's live notifications. A fold that never reads them (the audit's) turns this off: its steps
   * then carry no notification. @defaultValue true
   */
  readonly notifications?: boolean;
  /**
   * The state passed in is the caller's to consume: a fold that drops each state once it has the next one, and
   * never holds an older state (nor another version of its inbox lists), lets the step change the inbox lists in
   * place instead of keeping the old state's lists as they were (`spliceRemoving`'s `consume`), and the history
   * classification's marks too (`classifySplice`'s `consume`). Reading a consumed state's inbox or marks afterwards
   * gives the new ones. A refused event changes nothing either way. @defaultValue false
   */
  readonly consume?: boolean;
}

/**
 * One event into the session state, or a typed refusal: seq out of order, session/created not first,
 * a fork boundary that is missing or inside an open turn, a splice that does not fit, an impossible turn event.
 */
export const stepSession = (state: SessionState, event: LogEvent, options?: StepSessionOptions): E.Either<DomainError, SessionStep> => {
  if (event.seq !== state.nextSeq) return impossible(event, `expected seq ${state.nextSeq}`);
  if (event.seq === 0 && event.type !== 'session/created') return impossible(event, 'the first event of a session is session/created');
  const seedLength = state.created?.seedLength;
  if (seedLength !== undefined && event.seq === seedLength + 1 && event.type !== 'session/end-seed') {
    return impossible(event, `a fork's seed of ${seedLength} events ends with session/end-seed at seq ${seedLength + 1}`);
  }
  if (event.type === 'session/created' && event.seq !== 0 && !inSeed(state, event.seq)) {
    return impossible(event, 'session/created appears only first (or inside an inherited seed)');
  }

  const turns = evolveTurns(state.turns, event);
  if (E.isLeft(turns)) return turns;
  const isOwned = owned(state, event.seq);
  // Every field of the next state, changed below as the event requires; the state is built once, at the end.
  let { created, seedEndSeq, inboxResets, inbox, classification, openTurnClaimed } = state;
  const consumed = isOwned ? evolveConsumedWork(state.consumed, event) : state.consumed;
  let notifications: readonly InboxNotification[] = NO_NOTIFICATIONS;
  let messageClass: MessageClass | undefined;
  let closedTurn: SessionStep['closedTurn'];
  let removedBySplice: readonly UserMessage[] | undefined;

  if (isKnownEvent(event)) {
    switch (event.type) {
      case 'session/created': {
        if (event.seq === 0) created = event.data;
        // a fork (this session, or an ancestor inherited in the seed) restarts its inbox after its own seed
        const nested = event.data.seedLength;
        if (nested !== undefined) inboxResets = [...inboxResets, event.seq + nested + 1];
        break;
      }
      case 'session/end-seed':
        if (seedLength !== undefined && event.seq === seedLength + 1) {
          if (state.turns.openTurn) return impossible(event, `the fork boundary falls inside open turn ${state.turns.openTurn.turn}`);
          seedEndSeq = event.seq;
        }
        // The child never inherits pending input: its inbox starts empty after the seed.
        if (state.inboxResets.includes(event.seq)) inbox = initialInboxState();
        break;
      case 'agent/inbox/spliced': {
        const splice: InboxSplicedData = event.data;
        // The removed messages come back from the splice itself: nothing below reads the state it applied to.
        const applied = applySpliceRemoving(state.inbox, splice, options?.consume === true);
        if (E.isLeft(applied)) {
          const e = applied.left;
          return E.left(Object.assign(e, { message: `seq ${event.seq}: ${e.message}`, seq: event.seq }));
        }
        const { removed } = applied.right;
        removedBySplice = removed;
        const turn = state.turns.openTurn?.turn ?? state.turns.lastTurn;
        // (inside a fork's seed the splice implies no notification: none is built)
        if (isOwned && options?.notifications !== false) notifications = notificationsOfRemoval(splice, removed, turn);
        const isClaim = splice.removedCount !== undefined && splice.outcome !== 'canceled';
        inbox = applied.right.state;
        classification = classifySplice(state.classification, splice, removed, options?.consume === true);
        if (isClaim && state.turns.openTurn && removed.length > 0) openTurnClaimed = appendAll(state.openTurnClaimed, messageIds(removed));
        break;
      }
      case 'user/message': {
        if (options?.consume === true) messageClass = classifyMessageInPlace(state.classification, event.data);
        else {
          const classified = classifyMessage(state.classification, event.data);
          classification = classified.state;
          messageClass = classified.class;
        }
        break;
      }
      case 'turn/start':
        openTurnClaimed = NO_IDS;
        break;
      case 'turn/end':
        // the open turn's own list, handed over whole (sealed: no older state's append can change it), not copied
        closedTurn = { ...turns.right.lastClosed!, claimed: sealedItems(state.openTurnClaimed) };
        openTurnClaimed = NO_IDS;
        break;
      default:
        break;
    }
  }
  const next: SessionState = {
    nextSeq: state.nextSeq + 1,
    created,
    seedEndSeq,
    inboxResets,
    inbox,
    turns: turns.right,
    consumed,
    classification,
    openTurnClaimed,
  };
  if (messageClass !== undefined) return E.right({ state: next, notifications, messageClass });
  if (closedTurn !== undefined) return E.right({ state: next, notifications, closedTurn });
  if (removedBySplice !== undefined) return E.right({ state: next, notifications, removed: removedBySplice });
  return E.right({ state: next, notifications });
};

const NO_NOTIFICATIONS: readonly InboxNotification[] = Object.freeze([]);
const NO_IDS: AppendList<string> = emptyAppendList();
const impossible = (event: LogEvent, reason: string) => E.left(new ImpossibleEventError(event.seq, event.type, reason));

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
