import * as E from 'fp-ts/lib/Either.js';
import { samePayload } from './sealed-content.js';
import { accountsForClaim } from './consumed-work.js';
import type { DomainError } from './errors.js';
import type { EventMetadata } from './event-metadata.js';
import type { InboxTarget, LogEvent, TurnEndReason } from './events.js';
import * as L from './inbox/pending-list.js';
import { listOf } from './inbox/inbox-state.js';
import type { MessageSource, UserMessage } from './message.js';
import { inSeed, initialSessionState, stepSession, type SessionState, type SessionStep } from './session-fold.js';

/**
 * The life of each input, as the log tells it: a pure fold that turns every event into *facts* about the messages
 * it touches (admitted, edited, moved, claimed, entered, dropped, rejected, canceled, turn ended), and a reducer
 * that turns one message's facts into its fate. `steerlog why` prints the facts; `audit --json` the fates.
 * Events inside a fork's inherited seed say nothing about this session's inbox and give no facts.
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
  /** Entered the model as a user/message; `rewritten` when the pre-step changed its content. */
  | (At & { readonly kind: 'entered'; readonly id: string; readonly turn: number; readonly step: number; readonly rewritten: boolean })
  /** Claimed for a step that ran without it: the pre-step dropped it. */
  | (At & { readonly kind: 'dropped'; readonly id: string; readonly turn: number; readonly step: number })
  /** Claimed, but the turn closed before a step ran: the pre-step rejected the step (or the turn failed first). */
  | (At & { readonly kind: 'rejected'; readonly id: string; readonly turn: number; readonly reason: TurnEndReason })
  /** The turn that claimed it ended; `accounted`: that turn accounts for consumed work (protocol: it stepped, or its reason accounts for a claim). */
  | (At & { readonly kind: 'turn-ended'; readonly id: string; readonly turn: number; readonly reason: TurnEndReason; readonly accounted: boolean });

interface Claimed {
  readonly message: UserMessage;
  readonly step: number;
}

/** The fold state: the session fold plus what the open turn claimed. */
export interface MessageFactState {
  readonly session: SessionState;
  /** Claimed in the open turn and not yet seen in a step (id → claim). */
  readonly awaiting: readonly Claimed[];
  /** Claimed for the open step, and which of them entered. */
  readonly inStep: readonly Claimed[];
  readonly enteredInStep: readonly string[];
  /** Every id claimed by the open turn. */
  readonly turnClaimed: readonly string[];
  /** Did the open turn run a step? */
  readonly stepped: boolean;
  /** The last pure cancellation: a strict steer re-admits its ids into the other list in the next event. */
  readonly lastCancel: { readonly seq: number; readonly target: InboxTarget; readonly ids: readonly string[] } | null;
}

/** The fold before any event. */
export const initialMessageFactState = (): MessageFactState => ({
  session: initialSessionState(),
  awaiting: [],
  inStep: [],
  enteredInStep: [],
  turnClaimed: [],
  stepped: false,
  lastCancel: null,
});

/** Equal content: compared as text when readable, by mac when sealed (so an erased log tells rewrites apart too). */
const sameContent = (a: UserMessage, b: UserMessage): boolean => samePayload(a, b);

/**
 * One event into the fold: the new state and the facts it states, or the session fold's refusal (the same one
 * `audit` reports). Pure.
 */
export const stepMessageFacts = (
  state: MessageFactState,
  event: LogEvent,
): E.Either<DomainError, { readonly state: MessageFactState; readonly facts: readonly MessageFact[]; readonly session: SessionStep }> => {
  const stepped = stepSession(state.session, event);
  if (E.isLeft(stepped)) return stepped;
  return E.right({ ...factsOf(state, event, stepped.right), session: stepped.right });
};

/** The facts of one event, given the session fold's step over it. */
const factsOf = (state: MessageFactState, event: LogEvent, stepped: SessionStep): { readonly state: MessageFactState; readonly facts: readonly MessageFact[] } => {
  const session = stepped.state;
  const base: MessageFactState = { ...state, session };
  if (event.seq === 0 || inSeed(state.session, event.seq)) return { state: base, facts: [] };
  const at = { seq: event.seq, time: event.time };
  const meta = event.metadata ? { metadata: event.metadata } : {};
  const before = state.session;
  const openTurn = before.turns.openTurn;
  switch (event.type) {
    case 'agent/inbox/spliced': {
      const d = event.data as { target: InboxTarget; start: number; removedCount?: number; inserted: readonly UserMessage[]; outcome?: 'canceled' };
      const removed = d.removedCount ? L.slice(listOf(before.inbox, d.target), d.start, d.removedCount) : [];
      const facts: MessageFact[] = [];
      if (d.removedCount && d.outcome !== 'canceled') {
        const turn = openTurn?.turn ?? before.turns.lastTurn;
        const step = (openTurn?.steps ?? 0) + 1;
        const batch = removed.map((m) => m.id);
        for (const m of removed) facts.push({ kind: 'claimed', ...at, id: m.id, target: d.target, turn, step, batch });
        return ({
          state: { ...base, awaiting: [...state.awaiting, ...removed.map((message) => ({ message, step }))], turnClaimed: [...state.turnClaimed, ...batch], lastCancel: null },
          facts,
        });
      }
      const insertedIds = new Set(d.inserted.map((m) => m.id));
      for (const m of removed) if (!insertedIds.has(m.id)) facts.push({ kind: 'canceled', ...at, id: m.id, target: d.target, ...meta });
      const removedIds = new Set(removed.map((m) => m.id));
      const c = state.lastCancel;
      const moved = c !== null && c.seq === event.seq - 1 && c.target !== d.target ? new Set(c.ids) : new Set<string>();
      for (const m of d.inserted) {
        if (removedIds.has(m.id)) facts.push({ kind: 'edited', ...at, id: m.id, target: d.target, ...meta });
        else if (moved.has(m.id)) facts.push({ kind: 'moved', ...at, id: m.id, to: d.target, ...meta });
        else facts.push({ kind: 'admitted', ...at, id: m.id, target: d.target, source: m.source, ...meta });
      }
      const pureCancel = d.outcome === 'canceled' && d.inserted.length === 0;
      return ({ state: { ...base, lastCancel: pureCancel ? { seq: event.seq, target: d.target, ids: removed.map((m) => m.id) } : null }, facts });
    }
    case 'step/start':
      return ({ state: { ...base, inStep: state.awaiting, awaiting: [], enteredInStep: [], stepped: true, lastCancel: null }, facts: [] });
    case 'user/message': {
      const m = event.data as UserMessage;
      const claim = state.inStep.find((c) => c.message.id === m.id);
      const turn = openTurn?.turn ?? before.turns.lastTurn;
      const fact: MessageFact = { kind: 'entered', ...at, id: m.id, turn, step: before.turns.openStep ?? 0, rewritten: claim ? !sameContent(claim.message, m) : false };
      return ({ state: { ...base, enteredInStep: [...state.enteredInStep, m.id], lastCancel: null }, facts: [fact] });
    }
    case 'step/end': {
      const facts: MessageFact[] = state.inStep
        .filter((c) => !state.enteredInStep.includes(c.message.id))
        .map((c) => ({ kind: 'dropped', ...at, id: c.message.id, turn: openTurn?.turn ?? 0, step: before.turns.openStep ?? 0 }));
      return ({ state: { ...base, inStep: [], enteredInStep: [], lastCancel: null }, facts });
    }
    case 'turn/end': {
      const { turn, reason } = event.data as { turn: number; reason: TurnEndReason };
      const accounted = state.stepped || (state.turnClaimed.length > 0 && accountsForClaim(reason));
      const facts: MessageFact[] = [
        ...state.awaiting.map((c): MessageFact => ({ kind: 'rejected', ...at, id: c.message.id, turn, reason })),
        ...state.turnClaimed.map((id): MessageFact => ({ kind: 'turn-ended', ...at, id, turn, reason, accounted })),
      ];
      return ({ state: { ...base, awaiting: [], inStep: [], enteredInStep: [], turnClaimed: [], stepped: false, lastCancel: null }, facts });
    }
    case 'turn/start':
      return ({ state: { ...base, awaiting: [], inStep: [], enteredInStep: [], turnClaimed: [], stepped: false, lastCancel: null }, facts: [] });
    default:
      return ({ state: { ...base, lastCancel: event.type === 'chain/head' || event.type === 'session/erased' ? state.lastCancel : null }, facts: [] });
  }
};

/** Where one input ended up. */
export type InputFateKind = 'entered' | 'rejected' | 'dropped' | 'canceled' | 'pending';

/** The fate of one message: its last life in the log, with the seqs and times that decided it. */
export interface InputFate {
  readonly id: string;
  readonly fate: InputFateKind;
  readonly admitted: { readonly seq: number; readonly time: number; readonly target: InboxTarget; readonly actor: string | null } | null;
  readonly claimed: { readonly seq: number; readonly time: number; readonly turn: number; readonly step: number } | null;
  /** The seq and time of the fact that decided the fate (entered, rejected, dropped, canceled); null when pending. */
  readonly decided: { readonly seq: number; readonly time: number } | null;
  /** Entered with content the pre-step rewrote. */
  readonly rewritten: boolean;
  /** The turn that claimed it ended: its seq, reason kind, and whether it accounts for consumed work. */
  readonly turnEnd: { readonly seq: number; readonly turn: number; readonly reason: string; readonly accounted: boolean } | null;
}

/** An input's fate before any fact about it: pending, nothing known. */
export const initialFate = (id: string): InputFate => ({ id, fate: 'pending', admitted: null, claimed: null, decided: null, rewritten: false, turnEnd: null });

/** Applies one fact about an input (in log order) to its fate. Pure. */
export const stepFate = (fate: InputFate, f: MessageFact): InputFate => {
  const id = fate.id;
  switch (f.kind) {
    case 'admitted':
      return { id, fate: 'pending', admitted: { seq: f.seq, time: f.time, target: f.target, actor: f.metadata?.actor ?? null }, claimed: null, decided: null, rewritten: false, turnEnd: null };
    case 'moved':
      return { ...fate, fate: 'pending', decided: null, admitted: fate.admitted ? { ...fate.admitted, target: f.to } : null };
    case 'edited':
      return fate;
    case 'canceled':
      return { ...fate, fate: 'canceled', decided: { seq: f.seq, time: f.time } };
    case 'claimed':
      return { ...fate, claimed: { seq: f.seq, time: f.time, turn: f.turn, step: f.step } };
    case 'entered':
      return { ...fate, fate: 'entered', decided: { seq: f.seq, time: f.time }, rewritten: f.rewritten };
    case 'dropped':
      return { ...fate, fate: 'dropped', decided: { seq: f.seq, time: f.time } };
    case 'rejected':
      return { ...fate, fate: 'rejected', decided: { seq: f.seq, time: f.time } };
    case 'turn-ended':
      return { ...fate, turnEnd: { seq: f.seq, turn: f.turn, reason: f.reason.kind, accounted: f.accounted } };
  }
};

/** Reduces one message's facts (in log order) to its fate. Pure. */
export const fateOf = (id: string, facts: readonly MessageFact[]): InputFate => facts.reduce(stepFate, initialFate(id));
