import * as E from 'fp-ts/lib/Either.js';
import { samePayload } from './sealed-content.js';
import { appendAll, appendListItems, appendOne, emptyAppendList, type AppendList } from './append-list.js';
import { accountsForClaim } from './consumed-work.js';
import type { DomainError } from './errors.js';
import type { EventMetadata } from './event-metadata.js';
import { memberOf } from './id-membership.js';
import type { InboxTarget, LogEvent, TurnEndReason } from './events.js';
import { messageIds, type MessageSource, type UserMessage } from './message.js';
import { inSeed, initialSessionState, stepSession, type SessionState, type SessionStep, type StepSessionOptions } from './session-fold.js';

/**
 * The life of each input, as the log tells it: a pure fold that turns every event into *facts* about the messages
 * it touches (admitted, edited, moved, claimed, entered, dropped, rejected, canceled, turn ended); the reducer
 * that turns one message's facts into its fate is in `input-fate.ts`. `steerlog why` prints the facts; `audit
 * --json` the fates.
 * Events inside a fork's inherited seed say nothing about this session's inbox: the only facts they give are the
 * `entered` ones of the seed's user/messages (marked `inherited`), so every message the history holds has a fate.
 */

/** Who and when, for every fact. */
interface At {
  readonly seq: number;
  readonly time: number;
}

/** One thing the log says about one message. */
export type MessageFact =
  | (At & { readonly kind: 'admitted'; readonly id: string; readonly target: InboxTarget; readonly source: MessageSource; readonly metadata?: EventMetadata })
  /** Replaced in place by a queue edit (same id, new content). */
  | (At & { readonly kind: 'edited'; readonly id: string; readonly target: InboxTarget; readonly metadata?: EventMetadata })
  /** Moved to another list (a strict steer: canceled, then admitted again under the same id in the next event). */
  | (At & { readonly kind: 'moved'; readonly id: string; readonly to: InboxTarget; readonly metadata?: EventMetadata })
  | (At & { readonly kind: 'canceled'; readonly id: string; readonly target: InboxTarget; readonly metadata?: EventMetadata })
  /** Claimed at a step boundary of `turn`, for its step `step`, together with `batch` (in claim order). */
  | (At & { readonly kind: 'claimed'; readonly id: string; readonly target: InboxTarget; readonly turn: number; readonly step: number; readonly batch: readonly string[] })
  /**
   * Entered the model as a user/message; `rewritten` when the pre-step changed its content; `inherited` when the
   * user/message is in a fork's inherited seed (it entered in the history the session was forked from: how it was
   * admitted and claimed there is that history's, not this session's inbox).
   */
  | (At & { readonly kind: 'entered'; readonly id: string; readonly turn: number; readonly step: number; readonly rewritten: boolean; readonly inherited?: true })
  /** Claimed for a step that ran without it: the pre-step dropped it. */
  | (At & { readonly kind: 'dropped'; readonly id: string; readonly turn: number; readonly step: number })
  /** Claimed, but the turn closed before a step ran: the pre-step rejected the step (or the turn failed first). */
  | (At & { readonly kind: 'rejected'; readonly id: string; readonly turn: number; readonly reason: TurnEndReason })
  /** The turn that claimed it ended; `accounted`: that turn accounts for consumed work (protocol: it stepped, or its reason accounts for a claim). */
  | (At & { readonly kind: 'turn-ended'; readonly id: string; readonly turn: number; readonly reason: TurnEndReason; readonly accounted: boolean });

/**
 * The fold state: the session fold plus what the open turn claimed. The lists grow by appending, for as long as a
 * turn is open (or, for claims outside any turn, for the whole log): they are {@link AppendList}s, so an event costs
 * O(1) amortized whatever their length, and an older state still reads its own items.
 */
export interface MessageFactState {
  readonly session: SessionState;
  /** Claimed in the open turn and not yet seen in a step, in claim order (the claimed messages themselves). */
  readonly awaiting: AppendList<UserMessage>;
  /** Claimed for the open step (what `awaiting` held at its step/start). */
  readonly inStep: AppendList<UserMessage>;
  /** `inStep` by id (the first claim of each id), when it is long enough for a map to pay; else null. */
  readonly inStepById: ReadonlyMap<string, UserMessage> | null;
  /** The ids of the open step's user/messages. */
  readonly enteredInStep: AppendList<string>;
  /** Every id claimed by the open turn (outside a fork's seed, the session fold's `openTurnClaimed` itself). */
  readonly turnClaimed: AppendList<string>;
  /** Did the open turn run a step? */
  readonly stepped: boolean;
  /** The last pure cancellation: a strict steer re-admits its ids into the other list in the next event. */
  readonly lastCancel: { readonly seq: number; readonly target: InboxTarget; readonly ids: readonly string[] } | null;
}

/** The fold before any event. */
export const initialMessageFactState = (): MessageFactState => ({
  session: initialSessionState(),
  awaiting: emptyAppendList(),
  inStep: emptyAppendList(),
  inStepById: null,
  enteredInStep: emptyAppendList(),
  turnClaimed: emptyAppendList(),
  stepped: false,
  lastCancel: null,
});

/** Equal content: compared as text when readable, by mac when sealed (so an erased log tells rewrites apart too). */
const sameContent = (a: UserMessage, b: UserMessage): boolean => samePayload(a, b);

/**
 * The end of a turn that claimed messages, as one record: its `turn-ended` facts (one per id it claimed, in claim
 * order, an id claimed twice twice) without an object per id. {@link turnEndedFacts} spells them out.
 */
export interface TurnEnded {
  readonly seq: number;
  readonly time: number;
  readonly turn: number;
  readonly reason: TurnEndReason;
  /** Does the turn account for consumed work (every one of its `turn-ended` facts says the same)? */
  readonly accounted: boolean;
  /** Every id the turn claimed, in claim order: the fold's own list, shared, not copied (read its first `length` items). */
  readonly ids: AppendList<string>;
}

/**
 * What one event says: its facts, a turn's end apart (its `turn-ended` facts as one record), the new state, and the
 * session fold's step it came from.
 */
interface FactsOfEvent {
  readonly state: MessageFactState;
  /** The event's facts, without the `turn-ended` ones. */
  readonly facts: readonly MessageFact[];
  /** The `turn-ended` facts of a turn/end whose turn claimed anything; null for any other event. */
  readonly turnEnded: TurnEnded | null;
  /** The `claimed` facts of a claiming splice, when asked for as one record (`claimRecords`); else null. */
  readonly claim: SpliceClaim | null;
  readonly session: SessionStep;
}

/** One event's record, its keys always in one order (one object shape for every event). */
const factsOfEvent = (state: MessageFactState, facts: readonly MessageFact[], turnEnded: TurnEnded | null, session: SessionStep, claim: SpliceClaim | null = null): FactsOfEvent => ({
  state,
  facts,
  turnEnded,
  claim,
  session,
});

/** The `turn-ended` fact of the `i`th id the turn claimed. */
const turnEndedFact = (t: TurnEnded, i: number): MessageFact => ({ kind: 'turn-ended', seq: t.seq, time: t.time, id: t.ids.shared[i]!, turn: t.turn, reason: t.reason, accounted: t.accounted });

/** The `turn-ended` facts of a turn's end, one per id it claimed, in claim order; only those about `id` when given. */
export const turnEndedFacts = (t: TurnEnded, id?: string): MessageFact[] => {
  const facts: MessageFact[] = [];
  const ids = t.ids.shared;
  for (let i = 0; i < t.ids.length; i++) if (id === undefined || ids[i] === id) facts.push(turnEndedFact(t, i));
  return facts;
};

/**
 * Options of {@link stepMessageFactRecords}: the session fold's, and how a claim's facts come. With `consume`, the
 * state passed in is written over and returned as the new one (no state object per event), besides its inbox lists.
 */
export interface MessageFactRecordOptions extends StepSessionOptions {
  /**
   * `true`: a claiming splice's `claimed` facts come as one record (`claim`, a {@link SpliceClaim}) instead of in
   * `facts` (they are then its only facts), for a consumer that steps each id's fate ({@link stepFatesClaimed}): a
   * claim of many messages then makes no fact, and no `batch` array, per claim. @defaultValue false
   */
  readonly claimRecords?: boolean;
}

/**
 * The claim of one splice as one record: its `claimed` facts (one per message it removed, in claim order, each with
 * the claim's ids as `batch`) without an object per message. {@link claimedFacts} spells them out.
 */
export interface SpliceClaim {
  readonly seq: number;
  readonly time: number;
  /** The list the messages were claimed from. */
  readonly target: InboxTarget;
  readonly turn: number;
  readonly step: number;
  /** The messages the splice claimed, in claim order (the session fold's own array, shared, not copied). */
  readonly messages: readonly UserMessage[];
}

/** The `claimed` facts of a splice's claim, in claim order (one `batch` array shared by all); only those about `id` when given. */
export const claimedFacts = (c: SpliceClaim, id?: string): MessageFact[] => {
  const facts: MessageFact[] = [];
  const { seq, time, target, turn, step, messages } = c;
  const batch = messageIds(messages);
  for (let i = 0; i < messages.length; i++) {
    const mid = messages[i]!.id;
    if (id === undefined || mid === id) facts.push({ kind: 'claimed', seq, time, id: mid, target, turn, step, batch });
  }
  return facts;
};

/**
 * One event into the fold, with a turn's end as one record: the new state, the facts the event states apart from
 * its `turn-ended` ones, and those as a {@link TurnEnded} (null unless the event ends a turn that claimed
 * anything), or the session fold's refusal. The `turn-ended` facts come after the event's other facts. For a
 * consumer that steps each id's fate (`audit`) or asks about one id (`why`): a turn of many claims makes no object
 * per claim. `options` go to the session fold (`{ notifications: false }`: the step's `session.notifications` are
 * then not computed, for a consumer that never reads them); with `claimRecords`, a splice's claim is one record
 * too (`claim`; null for any other event, and always null without the option). Pure.
 */
export const stepMessageFactRecords = (
  state: MessageFactState,
  event: LogEvent,
  options?: MessageFactRecordOptions,
): E.Either<
  DomainError,
  { readonly state: MessageFactState; readonly facts: readonly MessageFact[]; readonly turnEnded: TurnEnded | null; readonly claim: SpliceClaim | null; readonly session: SessionStep }
> => {
  const stepped = stepSession(state.session, event, options);
  if (E.isLeft(stepped)) return stepped;
  // factsOf's record carries the session step: one object per event, not a second one copying it
  return E.right(factsOf(state, event, stepped.right, options?.claimRecords === true, options?.consume === true));
};

/**
 * One event into the fold: the new state and the facts it states, or the session fold's refusal (the same one
 * `audit` reports). Pure.
 */
export const stepMessageFacts = (
  state: MessageFactState,
  event: LogEvent,
): E.Either<DomainError, { readonly state: MessageFactState; readonly facts: readonly MessageFact[]; readonly session: SessionStep }> => {
  const stepped = stepMessageFactRecords(state, event);
  if (E.isLeft(stepped)) return stepped;
  const { state: next, facts, turnEnded, session } = stepped.right;
  if (turnEnded === null) return E.right({ state: next, facts, session });
  const all = facts.slice();
  for (const f of turnEndedFacts(turnEnded)) all.push(f);
  return E.right({ state: next, facts: all, session });
};

/** A fold state written in place (a consumed one: `consume`). */
type OwnedFactState = { -readonly [K in keyof MessageFactState]: MessageFactState[K] };

/**
 * The fold state with its fields named (one object shape for every state, built without spreads); written into
 * `into` when given (the consumed state: no object per event), else a new one.
 */
const factState = (
  into: OwnedFactState | null,
  session: SessionState,
  awaiting: AppendList<UserMessage>,
  inStep: AppendList<UserMessage>,
  inStepById: ReadonlyMap<string, UserMessage> | null,
  enteredInStep: AppendList<string>,
  turnClaimed: AppendList<string>,
  stepped: boolean,
  lastCancel: MessageFactState['lastCancel'],
): MessageFactState => {
  if (into === null) return { session, awaiting, inStep, inStepById, enteredInStep, turnClaimed, stepped, lastCancel };
  into.session = session;
  into.awaiting = awaiting;
  into.inStep = inStep;
  into.inStepById = inStepById;
  into.enteredInStep = enteredInStep;
  into.turnClaimed = turnClaimed;
  into.stepped = stepped;
  into.lastCancel = lastCancel;
  return into;
};

/** Steps claiming more than this many messages look their claims up by a map (built once per step). */
const MAP_FROM = 8;

/** The map of a step's claims by id, first claim of an id first; null for a short step (scanned instead). */
const claimsById = (claims: AppendList<UserMessage>): ReadonlyMap<string, UserMessage> | null => {
  if (claims.length <= MAP_FROM) return null;
  const byId = new Map<string, UserMessage>();
  const items = claims.shared;
  // last to first, each id set: an id's first claim is set last, so it is the one kept (one hash lookup per claim)
  for (let i = claims.length - 1; i >= 0; i--) {
    const m = items[i]!;
    byId.set(m.id, m);
  }
  return byId;
};

/** The open step's claim of `id` (its first), if any. */
const claimOf = (state: MessageFactState, id: string): UserMessage | undefined => {
  if (state.inStepById !== null) return state.inStepById.get(id);
  const items = state.inStep.shared;
  for (let i = 0; i < state.inStep.length; i++) if (items[i]!.id === id) return items[i];
  return undefined;
};

const NO_FACTS: readonly MessageFact[] = Object.freeze([]);
const NONE: readonly never[] = Object.freeze([]);
const EMPTY = emptyAppendList<never>();

/** `fact` with the event's metadata as its last key, when the event has metadata. */
const withMetadata = <F extends MessageFact>(fact: F & { metadata?: EventMetadata }, metadata: EventMetadata | undefined): F => {
  if (metadata !== undefined) fact.metadata = metadata;
  return fact;
};

/**
 * The facts of one event, given the session fold's step over it. The messages a splice removed come from the step
 * (`SessionStep.removed`): the list they were removed from is never read again, so its old version costs nothing.
 */
const factsOf = (state: MessageFactState, event: LogEvent, stepped: SessionStep, claimRecords: boolean, consume: boolean): FactsOfEvent => {
  // a consumed state is written over (every read of the old one comes before the new one is written)
  const into = consume ? (state as OwnedFactState) : null;
  const before = state.session;
  const wasStepped = state.stepped;
  const session = stepped.state;
  const { awaiting, inStep, inStepById, enteredInStep, turnClaimed, lastCancel } = state;
  if (event.seq === 0 || inSeed(before, event.seq)) {
    const turns = before.turns;
    const unchanged = factState(into, session, awaiting, inStep, inStepById, enteredInStep, turnClaimed, wasStepped, lastCancel);
    // the seed's history entered the model before this session existed: its entries are facts, its inbox is not
    if (event.type !== 'user/message') return factsOfEvent(unchanged, NO_FACTS, null, stepped);
    const entered: MessageFact = {
      kind: 'entered',
      seq: event.seq,
      time: event.time,
      id: (event.data as UserMessage).id,
      turn: turns.openTurn?.turn ?? turns.lastTurn,
      step: turns.openStep ?? 0,
      rewritten: false,
      inherited: true,
    };
    return factsOfEvent(unchanged, [entered], null, stepped);
  }
  const { seq, time, metadata } = event;
  const openTurn = before.turns.openTurn;
  switch (event.type) {
    case 'agent/inbox/spliced': {
      const d = event.data as { target: InboxTarget; start: number; removedCount?: number; inserted: readonly UserMessage[]; outcome?: 'canceled' };
      const removed: readonly UserMessage[] = d.removedCount ? (stepped.removed ?? NONE) : NONE;
      const target = d.target;
      const inserted = d.inserted;
      // (indexed loops throughout: no iterator per splice)
      if (d.removedCount && d.outcome !== 'canceled') {
        const claim: SpliceClaim = { seq, time, target, turn: openTurn?.turn ?? before.turns.lastTurn, step: (openTurn?.steps ?? 0) + 1, messages: removed };
        // the claimed facts spelled out only for a consumer that asked for them; else the claim is one record
        const claimFacts = claimRecords ? NO_FACTS : claimedFacts(claim);
        const record = claimRecords ? claim : null;
        // a claim outside any turn is kept by no list: the next turn/start empties them before a step or a turn/end reads them
        if (openTurn === null) return factsOfEvent(factState(into, session, awaiting, inStep, inStepById, enteredInStep, turnClaimed, wasStepped, null), claimFacts, null, stepped, record);
        // the open turn's claims are the session fold's own list (outside a fork's seed both hold the same ids: each
        // turn/start and turn/end empties both, and both take a claim in an open turn): held once, not twice
        return factsOfEvent(factState(into, session, appendAll(awaiting, removed), inStep, inStepById, enteredInStep, session.openTurnClaimed, wasStepped, null), claimFacts, null, stepped, record);
      }
      // here a removal is a cancel (a claim went above): a splice that also inserts re-inserts some (edits), and only
      // then are the ids of both lists looked up in each other
      const pureCancel = d.outcome === 'canceled' && inserted.length === 0;
      const editing = removed.length > 0 && inserted.length > 0;
      // without an edit the splice states one fact per message it removed or inserted: an array of that size (an
      // empty array's first push would give it room for 17); an edit states fewer, appended one at a time
      const facts: MessageFact[] = editing ? [] : new Array<MessageFact>(removed.length + inserted.length);
      let k = 0;
      const reinserted = editing ? memberOf(messageIds(inserted), removed.length) : null;
      // the removed ids are kept only when read: by an edit (below) or as the last pure cancellation (the next event)
      const removedIds = pureCancel || editing ? messageIds(removed) : null;
      for (let i = 0; i < removed.length; i++) {
        const id = removed[i]!.id;
        if (reinserted === null || !reinserted(id)) facts[k++] = withMetadata({ kind: 'canceled', seq, time, id, target }, metadata);
      }
      const wasRemoved = editing ? memberOf(removedIds!, inserted.length) : null;
      const moved = lastCancel !== null && lastCancel.seq === seq - 1 && lastCancel.target !== target && inserted.length > 0 ? memberOf(lastCancel.ids, inserted.length) : null;
      for (let i = 0; i < inserted.length; i++) {
        const m = inserted[i]!;
        const id = m.id;
        if (wasRemoved !== null && wasRemoved(id)) facts[k++] = withMetadata({ kind: 'edited', seq, time, id, target }, metadata);
        else if (moved !== null && moved(id)) facts[k++] = withMetadata({ kind: 'moved', seq, time, id, to: target }, metadata);
        else facts[k++] = withMetadata({ kind: 'admitted', seq, time, id, target, source: m.source }, metadata);
      }
      return factsOfEvent(factState(into, session, awaiting, inStep, inStepById, enteredInStep, turnClaimed, wasStepped, pureCancel ? { seq, target, ids: removedIds! } : null), facts, null, stepped);
    }
    case 'step/start':
      return factsOfEvent(factState(into, session, EMPTY, awaiting, claimsById(awaiting), EMPTY, turnClaimed, true, null), NO_FACTS, null, stepped);
    case 'user/message': {
      const m = event.data as UserMessage;
      const id = m.id;
      const claim = claimOf(state, id);
      const turn = openTurn?.turn ?? before.turns.lastTurn;
      const fact: MessageFact = { kind: 'entered', seq, time, id, turn, step: before.turns.openStep ?? 0, rewritten: claim ? !sameContent(claim, m) : false };
      return factsOfEvent(factState(into, session, awaiting, inStep, inStepById, appendOne(enteredInStep, id), turnClaimed, wasStepped, null), [fact], null, stepped);
    }
    case 'step/end': {
      const facts: MessageFact[] = [];
      const turn = openTurn?.turn ?? 0;
      const step = before.turns.openStep ?? 0;
      if (inStep.length > 0) {
        const entered = memberOf(appendListItems(enteredInStep), inStep.length);
        const claims = inStep.shared;
        for (let i = 0; i < inStep.length; i++) {
          const id = claims[i]!.id;
          if (!entered(id)) facts.push({ kind: 'dropped', seq, time, id, turn, step });
        }
      }
      return factsOfEvent(factState(into, session, awaiting, EMPTY, null, EMPTY, turnClaimed, wasStepped, null), facts, null, stepped);
    }
    case 'turn/end': {
      const { turn, reason } = event.data as { turn: number; reason: TurnEndReason };
      const accounted = wasStepped || (turnClaimed.length > 0 && accountsForClaim(reason));
      const facts: MessageFact[] = [];
      const claims = awaiting.shared;
      for (let i = 0; i < awaiting.length; i++) facts.push({ kind: 'rejected', seq, time, id: claims[i]!.id, turn, reason });
      // the turn-ended facts (one per id the turn claimed) as one record: a consumer spells them out or steps them one at a time
      const turnEnded: TurnEnded | null = turnClaimed.length > 0 ? { seq, time, turn, reason, accounted, ids: turnClaimed } : null;
      return factsOfEvent(factState(into, session, EMPTY, EMPTY, null, EMPTY, EMPTY, false, null), facts, turnEnded, stepped);
    }
    case 'turn/start':
      return factsOfEvent(factState(into, session, EMPTY, EMPTY, null, EMPTY, EMPTY, false, null), NO_FACTS, null, stepped);
    default:
      return factsOfEvent(
        factState(into, session, awaiting, inStep, inStepById, enteredInStep, turnClaimed, wasStepped, event.type === 'chain/head' || event.type === 'session/erased' ? lastCancel : null),
        NO_FACTS,
        null,
        stepped,
      );
  }
};
