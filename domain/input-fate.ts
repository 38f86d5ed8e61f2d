import { recordedActor, type ActorKind } from './event-metadata.js';
import type { InboxTarget, TurnEndReason } from './events.js';
import type { MessageFact, SpliceClaim, TurnEnded } from './message-facts.js';

/**
 * Each input's fate: where it ended up (entered, rejected, dropped, canceled, or still pending), reduced from its
 * message facts in log order (`audit --json`'s fates, `steerlog why`'s answer).
 */

/** Where one input ended up. */
export type InputFateKind = 'entered' | 'rejected' | 'dropped' | 'canceled' | 'pending';

/** The fate of one message: its last life in the log, with the seqs and times that decided it. */
export interface InputFate {
  readonly id: string;
  readonly fate: InputFateKind;
  /** Its admission: seq, time, list, and who admitted it (`metadata.actor` / `actorKind` of the splice, null when it names none). */
  readonly admitted: { readonly seq: number; readonly time: number; readonly target: InboxTarget; readonly actor: string | null; readonly actorKind: ActorKind | null } | null;
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

/** An input's fate that {@link stepFateInPlace} writes to (its owner's own record). */
export type MutableInputFate = { -readonly [K in keyof InputFate]: InputFate[K] };

/**
 * Applies one fact about an input (in log order) to its fate, written into a record the caller owns (its keys keep
 * {@link initialFate}'s order). The nested records (`admitted`, `claimed`, `decided`, `turnEnd`) are new objects when
 * they change, never changed in place, so a shallow copy of `fate` is a snapshot. A fold over many inputs' facts
 * (`audit`) then makes no fate object per fact. Changes nothing but `fate`.
 *
 * `ownsRecords` (default false): the caller also owns `fate`'s `admitted` record (it came from this function and
 * was never handed out) and reads no snapshot of `fate` before its last fact: an admission then writes over that
 * record instead of making a new one, so a long fold whose ids are admitted again and again (`audit`) keeps no
 * garbage of old admission records. Every record's values are the same either way.
 */
export const stepFateInPlace = (fate: MutableInputFate, f: MessageFact, ownsRecords = false): void => {
  switch (f.kind) {
    case 'admitted': {
      const by = recordedActor(f.metadata);
      fate.fate = 'pending';
      const admitted = fate.admitted as { -readonly [K in keyof NonNullable<InputFate['admitted']>]: NonNullable<InputFate['admitted']>[K] } | null;
      if (ownsRecords && admitted !== null) {
        // a fold that owns its records and takes no snapshot before its last fact: the admission record written over
        admitted.seq = f.seq;
        admitted.time = f.time;
        admitted.target = f.target;
        admitted.actor = by.actor;
        admitted.actorKind = by.actorKind;
      } else fate.admitted = { seq: f.seq, time: f.time, target: f.target, actor: by.actor, actorKind: by.actorKind };
      fate.claimed = null;
      fate.decided = null;
      fate.rewritten = false;
      fate.turnEnd = null;
      return;
    }
    case 'moved':
      fate.fate = 'pending';
      fate.decided = null;
      fate.admitted = fate.admitted ? { ...fate.admitted, target: f.to } : null;
      return;
    case 'edited':
      return;
    case 'claimed':
      fate.claimed = { seq: f.seq, time: f.time, turn: f.turn, step: f.step };
      return;
    case 'entered':
      fate.rewritten = f.rewritten;
      fate.fate = f.kind;
      fate.decided = { seq: f.seq, time: f.time };
      return;
    case 'canceled':
    case 'dropped':
    case 'rejected':
      fate.fate = f.kind;
      fate.decided = { seq: f.seq, time: f.time };
      return;
    case 'turn-ended':
      fate.turnEnd = turnEndOf(f);
      return;
  }
};

/** The fate's `turnEnd` record of a `turn-ended` fact (or of a turn's end, for each id it claimed). */
const turnEndOf = (t: { readonly seq: number; readonly turn: number; readonly reason: TurnEndReason; readonly accounted: boolean }): NonNullable<InputFate['turnEnd']> => ({
  seq: t.seq,
  turn: t.turn,
  reason: t.reason.kind,
  accounted: t.accounted,
});

/**
 * Applies a turn's end to the fate of every id it claimed, in claim order: what {@link stepFateInPlace} does with
 * each of its `turn-ended` facts, with one `turnEnd` record for them all (nested records are never changed in
 * place, so sharing one is the same). `fateOf` gives the record of an id, creating it if the caller has none.
 */
export const stepFatesTurnEnded = (t: TurnEnded, fateOf: (id: string) => MutableInputFate): void => {
  const turnEnd = turnEndOf(t);
  const ids = t.ids.shared;
  for (let i = 0; i < t.ids.length; i++) fateOf(ids[i]!).turnEnd = turnEnd;
};

/**
 * Applies a splice's claim to the fate of every message it claimed, in claim order: what {@link stepFateInPlace}
 * does with each of its `claimed` facts, with one `claimed` record for them all (nested records are never changed
 * in place, so sharing one is the same). `fateOf` gives the record of an id, creating it if the caller has none.
 */
export const stepFatesClaimed = (c: SpliceClaim, fateOf: (id: string) => MutableInputFate): void => {
  const claimed = { seq: c.seq, time: c.time, turn: c.turn, step: c.step };
  const messages = c.messages;
  for (let i = 0; i < messages.length; i++) fateOf(messages[i]!.id).claimed = claimed;
};

/** Applies one fact about an input (in log order) to its fate: a new record ({@link stepFateInPlace} on a copy). Pure. */
export const stepFate = (fate: InputFate, f: MessageFact): InputFate => {
  if (f.kind === 'edited') return fate;
  const next: MutableInputFate = { ...fate };
  stepFateInPlace(next, f);
  return next;
};

/** Reduces one message's facts (in log order) to its fate. Pure. */
export const fateOf = (id: string, facts: readonly MessageFact[]): InputFate => {
  const fate: MutableInputFate = initialFate(id);
  for (const f of facts) stepFateInPlace(fate, f);
  return fate;
};
