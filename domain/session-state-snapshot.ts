import type { SessionCreatedData } from './events.js';
import { appendAll, appendListItems, emptyAppendList } from './append-list.js';
import type { ConsumedWorkState } from './consumed-work.js';
import { initialClassificationState } from './history-classification.js';
import * as L from './inbox/pending-list.js';
import type { UserMessage } from './message.js';
import { emptyPersistentSet, persistentSetAdd, persistentSetValues } from './persistent-set.js';
import type { SessionState } from './session-fold.js';
import type { TurnFoldState } from './turns.js';

/**
 * The whole-session fold's state (session-fold.ts) as a plain JSON value and back: what a fold snapshot keeps so
 * that a reader can start folding at a checkpoint instead of at seq 0. Pure. The persistent structures of the state
 * are written as the arrays they hold (the pending lists, the classification marks, the open turn's claims) and
 * rebuilt as fresh families.
 */

/**
 * The version of the fold a snapshot was taken with. A snapshot of another version is not used (the reader folds
 * from the log and writes it again): raise it whenever session-fold.ts, or a fold it runs, changes what its state
 * holds or how an event changes it. Version 2: a snapshot also carries the resume facts (resume-facts.ts).
 */
export const SESSION_FOLD_VERSION = 2;

/** A session fold state as plain JSON (every persistent structure as an array). */
export interface SessionStateJson {
  readonly nextSeq: number;
  readonly created: SessionCreatedData | null;
  readonly seedEndSeq: number | null;
  readonly inboxResets: readonly number[];
  readonly nextTurn: readonly UserMessage[];
  readonly nextStep: readonly UserMessage[];
  readonly turns: TurnFoldState;
  readonly consumed: {
    readonly end: ConsumedWorkState['end'] | null;
    readonly droppedUnrun: boolean;
    readonly open: number | null;
    readonly stepped: readonly number[];
    readonly claimed: readonly number[];
  };
  /** The classification marks (ids claimed from next-step still waiting for their user/message). */
  readonly marks: readonly string[];
  readonly openTurnClaimed: readonly string[];
}

/** The state as plain JSON: O(pending + marks + the open turn's claims). */
export const sessionStateToJson = (state: SessionState): SessionStateJson => ({
  nextSeq: state.nextSeq,
  created: state.created,
  seedEndSeq: state.seedEndSeq,
  inboxResets: state.inboxResets,
  nextTurn: L.toArray(state.inbox.nextTurn),
  nextStep: L.toArray(state.inbox.nextStep),
  turns: state.turns,
  consumed: {
    end: state.consumed.end ?? null,
    droppedUnrun: state.consumed.droppedUnrun,
    open: state.consumed.open ?? null,
    stepped: state.consumed.stepped,
    claimed: state.consumed.claimed,
  },
  marks: [...persistentSetValues(state.classification.claimedFromNextStep)].sort(),
  openTurnClaimed: appendListItems(state.openTurnClaimed),
});

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isIntOrNull = (v: unknown): v is number | null => v === null || isInt(v);
const isIntArray = (v: unknown): v is number[] => Array.isArray(v) && v.every(isInt);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isMessage = (v: unknown): v is UserMessage => isObject(v) && typeof v.id === 'string';
const isTurnRecord = (v: unknown): boolean =>
  v === null || (isObject(v) && isInt(v.turn) && isInt(v.startSeq) && isIntOrNull(v.endSeq) && (v.reason === null || isObject(v.reason)) && isInt(v.steps));

/**
 * The state a {@link SessionStateJson} describes, or undefined when the value is not one (a reader then folds from
 * the log). The shape is checked, not the meaning: a snapshot is trusted only after its claim (the event it was
 * taken at) was checked against the log.
 */
export const sessionStateFromJson = (value: unknown): SessionState | undefined => {
  if (!isObject(value)) return undefined;
  const v = value;
  const turns = v.turns;
  const consumed = v.consumed;
  if (
    !isInt(v.nextSeq) ||
    !(v.created === null || isObject(v.created)) ||
    !isIntOrNull(v.seedEndSeq) ||
    !isIntArray(v.inboxResets) ||
    !Array.isArray(v.nextTurn) ||
    !v.nextTurn.every(isMessage) ||
    !Array.isArray(v.nextStep) ||
    !v.nextStep.every(isMessage) ||
    !isObject(turns) ||
    !isInt(turns.lastTurn) ||
    !isTurnRecord(turns.openTurn) ||
    !isIntOrNull(turns.openStep) ||
    !isTurnRecord(turns.lastClosed) ||
    !isObject(consumed) ||
    !(consumed.end === null || (isObject(consumed.end) && isInt(consumed.end.seq) && isInt(consumed.end.turn) && isObject(consumed.end.reason))) ||
    typeof consumed.droppedUnrun !== 'boolean' ||
    !isIntOrNull(consumed.open) ||
    !isIntArray(consumed.stepped) ||
    !isIntArray(consumed.claimed) ||
    !isStringArray(v.marks) ||
    !isStringArray(v.openTurnClaimed)
  ) {
    return undefined;
  }
  let marks = emptyPersistentSet();
  for (const id of v.marks) marks = persistentSetAdd(marks, id);
  const classification = v.marks.length === 0 ? initialClassificationState() : { claimedFromNextStep: marks };
  const consumedState: ConsumedWorkState = {
    end: (consumed.end ?? undefined) as ConsumedWorkState['end'],
    droppedUnrun: consumed.droppedUnrun,
    open: consumed.open ?? undefined,
    stepped: consumed.stepped,
    claimed: consumed.claimed,
  };
  return {
    nextSeq: v.nextSeq,
    created: v.created as SessionCreatedData | null,
    seedEndSeq: v.seedEndSeq,
    inboxResets: v.inboxResets,
    inbox: { nextTurn: L.pendingListOf(v.nextTurn), nextStep: L.pendingListOf(v.nextStep) },
    turns: { lastTurn: turns.lastTurn, openTurn: turns.openTurn, openStep: turns.openStep, lastClosed: turns.lastClosed } as TurnFoldState,
    consumed: consumedState,
    classification,
    openTurnClaimed: appendAll(emptyAppendList<string>(), v.openTurnClaimed),
  };
};
