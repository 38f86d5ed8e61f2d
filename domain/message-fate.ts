import { UNAVAILABLE_MARKER } from './sealed-content.js';
import * as E from 'fp-ts/lib/Either.js';
import { actorActionsOf, type ActorAction } from './actor-actions.js';
import { recordedActor, type ActorKind } from './event-metadata.js';
import type { LogEvent } from './events.js';
import type { DomainError } from './errors.js';
import type { MessageClass } from './history-classification.js';
import { initialMessageFactState, stepMessageFactRecords, type MessageFact, type MessageFactState } from './message-facts.js';

/** Who did it: the event's `metadata.actor` and `metadata.actorKind`, null when it names none (never a guess). */
export interface By {
  readonly actor: string | null;
  readonly actorKind: ActorKind | null;
}

/** One thing that happened to a pending input, at the seq and time of the event that did it. */
export type FateEntry =
  | ({ readonly kind: 'admitted'; readonly seq: number; readonly time: number; readonly target: 'next-turn' | 'next-step' } & By)
  | ({ readonly kind: 'edited'; readonly seq: number; readonly time: number; readonly target: 'next-turn' | 'next-step' } & By)
  | ({ readonly kind: 'moved'; readonly seq: number; readonly time: number; readonly to: 'next-turn' | 'next-step' } & By)
  | ({ readonly kind: 'canceled'; readonly seq: number; readonly time: number } & By)
  | { readonly kind: 'claimed'; readonly seq: number; readonly time: number; readonly turn: number }
  | { readonly kind: 'entered'; readonly seq: number; readonly time: number; readonly turn: number | null; readonly step: number | null; readonly class: MessageClass }
  | { readonly kind: 'dropped'; readonly seq: number; readonly time: number; readonly turn: number; readonly step: number }
  | { readonly kind: 'not-run'; readonly seq: number; readonly time: number; readonly turn: number; readonly reason: string };

/** Everything the log says happened to one message id, in seq order (an id may be re-admitted after it left). */
export interface MessageFate {
  readonly id: string;
  readonly source: string;
  readonly preview: string;
  readonly entries: readonly FateEntry[];
}

/** The preview of a message: its text, or the marker of sealed content (a stored, unopened one reads `[encrypted]`). */
const shownOf = (m: { readonly content: readonly { readonly type: string; readonly text?: string }[]; readonly sealed?: { readonly state?: string } }): string =>
  m.sealed !== undefined && m.sealed.state === undefined ? UNAVAILABLE_MARKER : previewOf(m.content);
const previewOf = (content: readonly { readonly type: string; readonly text?: string }[]): string => {
  const text = content.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join(' ').replace(/\s+/g, ' ').trim();
  // at most 200 UTF-16 units are at most 200 code points: only a longer text is split into them
  if (text.length <= 200) return text;
  const chars = [...text];
  return chars.length > 200 ? `${chars.slice(0, 200).join('')}…` : text;
};

/** An incremental {@link messageFates}: push events in seq order, read the fates so far at any point. */
export interface FateFold {
  /** Folds one more event; false (and nothing changes) when the session fold refuses it, and from then on. */
  push(event: LogEvent): boolean;
  readonly fates: ReadonlyMap<string, MessageFate>;
  /** Every admission and control action so far, with its actor (`actorActionsOf`). */
  readonly actions: readonly ActorAction[];
  readonly error: DomainError | null;
}

/** The console's entry for one of the message facts `steerlog why` prints (null for facts it does not list). */
const entryOf = (fact: MessageFact, messageClass: MessageClass | undefined): FateEntry | null => {
  const at = { seq: fact.seq, time: fact.time };
  switch (fact.kind) {
    case 'admitted':
      return { kind: 'admitted', ...at, target: fact.target, ...recordedActor(fact.metadata) };
    case 'edited':
      return { kind: 'edited', ...at, target: fact.target, ...recordedActor(fact.metadata) };
    case 'moved':
      return { kind: 'moved', ...at, to: fact.to, ...recordedActor(fact.metadata) };
    case 'canceled':
      return { kind: 'canceled', ...at, ...recordedActor(fact.metadata) };
    case 'claimed':
      return { kind: 'claimed', ...at, turn: fact.turn };
    case 'entered':
      return { kind: 'entered', ...at, turn: fact.turn, step: fact.step, class: messageClass ?? 'prompt' };
    case 'dropped':
      return { kind: 'dropped', ...at, turn: fact.turn, step: fact.step };
    case 'rejected':
      return { kind: 'not-run', ...at, turn: fact.turn, reason: fact.reason.kind };
    case 'turn-ended':
      return null;
  }
};

/**
 * "What happened to this input?" for the console: the message facts of `steerlog why` (`stepMessageFacts`, one
 * fold for both), as entries per message id — admitted, edited, moved, canceled, claimed (turn), entered (turn, step
 * and the history class the session fold gives it), dropped by a pre-step, or never run because its turn closed
 * before a step.
 */
export const createFateFold = (): FateFold => {
  const fates = new Map<string, { id: string; source: string; preview: string; entries: FateEntry[] }>();
  let state: MessageFactState = initialMessageFactState();
  let error: DomainError | null = null;
  const actions: ActorAction[] = [];
  type Inserted = { id: string; source: { kind: string }; content: { type: string; text?: string }[]; sealed?: { state?: string } };
  /** The inserted messages of the splice being folded, by id, when it inserts enough of them for a map to pay. */
  let insertedOf: { readonly event: LogEvent; readonly byId: ReadonlyMap<string, Inserted> } | null = null;
  const insertedById = (event: LogEvent, inserted: readonly Inserted[], id: string): Inserted | undefined => {
    if (inserted.length <= 8) return inserted.find((x) => x.id === id);
    if (insertedOf === null || insertedOf.event !== event) {
      const byId = new Map<string, Inserted>();
      for (const m of inserted) if (!byId.has(m.id)) byId.set(m.id, m);
      insertedOf = { event, byId };
    }
    return insertedOf.byId.get(id);
  };
  const contentOf = (event: LogEvent, id: string): { source: string; preview: string } | null => {
    if (event.type === 'user/message') {
      const m = event.data as { source: { kind: string }; content: { type: string; text?: string }[]; sealed?: { state?: string } };
      return { source: m.source.kind, preview: shownOf(m) };
    }
    if (event.type === 'agent/inbox/spliced') {
      const m = insertedById(event, (event.data as { inserted: readonly Inserted[] }).inserted, id);
      return m ? { source: m.source.kind, preview: shownOf(m) } : null;
    }
    return null;
  };
  return {
    get fates() {
      return fates;
    },
    get error() {
      return error;
    },
    get actions() {
      return actions;
    },
    push(event) {
      if (error) return false;
      // a turn's end as one record, not read: its `turn-ended` facts make no entry
      const step = stepMessageFactRecords(state, event);
      if (E.isLeft(step)) {
        error = step.left;
        return false;
      }
      state = step.right.state;
      for (const a of actorActionsOf(event, step.right.facts, state.session.created?.seedLength)) actions.push(a);
      for (const fact of step.right.facts) {
        const entry = entryOf(fact, step.right.session.messageClass);
        if (!entry) continue;
        let f = fates.get(fact.id);
        if (!f) fates.set(fact.id, (f = { id: fact.id, source: '', preview: '', entries: [] }));
        const shown = contentOf(event, fact.id);
        if (shown) Object.assign(f, shown);
        f.entries.push(entry);
      }
      insertedOf = null;
      return true;
    },
  };
};

/** {@link createFateFold} over a whole log: every message's fate, and the first event the fold refused, if any. */
export const messageFates = (events: Iterable<LogEvent>): { readonly fates: ReadonlyMap<string, MessageFate>; readonly error: DomainError | null } => {
  const fold = createFateFold();
  for (const event of events) if (!fold.push(event)) break;
  return { fates: fold.fates, error: fold.error };
};
