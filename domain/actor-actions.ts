import { recordedActor, type ActorKind } from './event-metadata.js';
import type { LogEvent } from './events.js';
import type { MessageFact } from './message-facts.js';

/**
 * Who did what, as the log records it: every admission and every control action of a session, each with the actor
 * of the event that did it (`metadata.actor` and `metadata.actorKind`, null when the event names none — a log written
 * before actors were recorded shows null, never a guess). `audit` lists them, the console shows them.
 *
 * - `created` / `forked`: the session's own `session/created` (a fork's has a seed);
 * - `admitted`, `edited`, `moved` (a strict steer), `canceled`: the message facts of a splice (claims are the
 *   driver's, not an action);
 * - `stopped`: a turn that ended `aborted` (a stop or cancel by a user or a parent; a hook, disposal or shutdown);
 * - `woke`: a `turn/start` that records an actor (an explicit wake);
 * - `erased`: a `session/erased` event (crypto-shredding).
 * Events inside a fork's inherited seed are the parent's history, not actions on this session.
 */
export type ActorActionKind = 'created' | 'forked' | 'admitted' | 'edited' | 'moved' | 'canceled' | 'stopped' | 'woke' | 'erased';

/** One admission or control action: where (seq, time), what, on which message or turn, and by whom. */
export interface ActorAction {
  readonly seq: number;
  readonly time: number;
  readonly kind: ActorActionKind;
  /** The message id (admitted, edited, moved, canceled), else null. */
  readonly id: string | null;
  /** The turn (stopped, woke), else null. */
  readonly turn: number | null;
  readonly actor: string | null;
  readonly actorKind: ActorKind | null;
}

const NONE: readonly ActorAction[] = Object.freeze([]);

const action = (event: LogEvent, kind: ActorActionKind, id: string | null, turn: number | null): ActorAction => {
  // every key written out in one literal (a spread of the actor builds the object key by key: an action per
  // admission or cancel of the log)
  const by = recordedActor(event.metadata);
  return { seq: event.seq, time: event.time, kind, id, turn, actor: by.actor, actorKind: by.actorKind };
};

/**
 * The actions one event records, given the message facts it states (`stepMessageFacts`) and the session's seed
 * length (`session/created`'s `seedLength`: the events at seq 1..seedLength are a fork's inherited history). Pure.
 */
export const actorActionsOf = (event: LogEvent, facts: readonly MessageFact[], seedLength: number | undefined): readonly ActorAction[] => {
  if (event.type === 'agent/inbox/spliced') {
    const out: ActorAction[] = [];
    eachActorAction(event, facts, seedLength, (a) => void out.push(a));
    return out;
  }
  let one: ActorAction | null = null;
  eachActorAction(event, facts, seedLength, (a) => void (one = a));
  return one === null ? NONE : [one];
};

/**
 * Takes one action of an event as its parts (`eachActorActionPart`): the action is `{ seq: event.seq, time:
 * event.time, kind, id, turn }` with the event's recorded actor (`recordedActor(event.metadata)`), as
 * {@link actorActionsOf} builds it.
 */
export type ActorActionPartTaker = (event: LogEvent, kind: ActorActionKind, id: string | null, turn: number | null) => void;

/**
 * The actions of {@link actorActionsOf}, in the same order, each handed to `take` as its parts (no object per
 * action: for a fold that writes them out as it goes, as the audit's output does).
 */
export const eachActorActionPart = (event: LogEvent, facts: readonly MessageFact[], seedLength: number | undefined, take: ActorActionPartTaker): void => {
  if (seedLength !== undefined && event.seq >= 1 && event.seq <= seedLength) return;
  switch (event.type) {
    case 'session/created': {
      if (event.seq !== 0) return;
      const d = event.data as { seedLength?: number; origin?: string };
      take(event, d.seedLength !== undefined || d.origin === 'fork' ? 'forked' : 'created', null, null);
      return;
    }
    case 'agent/inbox/spliced': {
      // (an indexed loop: no iterator per splice)
      for (let i = 0; i < facts.length; i++) {
        const f = facts[i]!;
        if (f.kind === 'admitted' || f.kind === 'edited' || f.kind === 'moved' || f.kind === 'canceled') take(event, f.kind, f.id, null);
      }
      return;
    }
    case 'turn/start':
      if (event.metadata?.actor !== undefined) take(event, 'woke', null, (event.data as { turn: number }).turn);
      return;
    case 'turn/end': {
      const d = event.data as { turn: number; reason: { kind: string } };
      if (d.reason.kind === 'aborted') take(event, 'stopped', null, d.turn);
      return;
    }
    case 'session/erased':
      take(event, 'erased', null, null);
      return;
    default:
      return;
  }
};

/**
 * The actions of {@link actorActionsOf}, in the same order, each handed to `take` as it is made (no array per
 * event: for a fold that streams them, as the audit does).
 */
export const eachActorAction = (event: LogEvent, facts: readonly MessageFact[], seedLength: number | undefined, take: (action: ActorAction) => void): void => {
  // (the taker of the parts made once per call only for the few events that have an action)
  if (!mayAct(event, facts)) return;
  eachActorActionPart(event, facts, seedLength, (e, kind, id, turn) => take(action(e, kind, id, turn)));
};

/** Can `event` record an action at all (a cheap test before a taker is made for it)? */
const mayAct = (event: LogEvent, facts: readonly MessageFact[]): boolean => {
  switch (event.type) {
    case 'agent/inbox/spliced':
      return facts.length > 0;
    case 'session/created':
    case 'turn/start':
    case 'turn/end':
    case 'session/erased':
      return true;
    default:
      return false;
  }
};
