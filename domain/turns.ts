import * as E from 'fp-ts/lib/Either.js';
import { ImpossibleEventError } from './errors.js';
import { isKnownEvent, type LogEvent, type TurnEndReason } from './events.js';

/** A turn as the log tells it. */
export interface TurnRecord {
  readonly turn: number;
  readonly startSeq: number;
  /** seq of its turn/end, or null while open. */
  readonly endSeq: number | null;
  readonly reason: TurnEndReason | null;
  /** Steps entered (step/start events). */
  readonly steps: number;
}

/** The turn fold's state: the last turn number, the open turn and step, the last closed turn. */
export interface TurnFoldState {
  /** Number of the last turn/start anywhere in the log (seed included), else 0. */
  readonly lastTurn: number;
  readonly openTurn: TurnRecord | null;
  /** The open step's number, or null. */
  readonly openStep: number | null;
  /** The most recently closed turn, for consumers that list turns as they close. */
  readonly lastClosed: TurnRecord | null;
}

/** The turn fold's state before any event. */
export const initialTurnFoldState = (): TurnFoldState => turnState(0, null, null, null);

/** A state with every field named (one object shape for every state, built without spreads). */
const turnState = (lastTurn: number, openTurn: TurnRecord | null, openStep: number | null, lastClosed: TurnRecord | null): TurnFoldState => ({
  lastTurn,
  openTurn,
  openStep,
  lastClosed,
});

/**
 * The answer for an event that leaves the state as it is (most events of a log): the last such answer when it holds
 * the same state (an Either is never changed: one answer serves every event that keeps the state), else a new one.
 */
let unchanged: E.Right<TurnFoldState> | null = null;
const same = (state: TurnFoldState): E.Right<TurnFoldState> => (unchanged !== null && unchanged.right === state ? unchanged : (unchanged = E.right(state) as E.Right<TurnFoldState>));

/** The refusal of an event that cannot happen where it stands (a function, not a closure made on every event). */
const refuse = (event: LogEvent, reason: string): E.Either<ImpossibleEventError, never> => E.left(new ImpossibleEventError(event.seq, event.type, reason));

/**
 * One event into the turn fold, refusing events that cannot happen where they stand: a turn/start while a turn
 * is open or out of sequence, a step outside its turn, a step/end or turn/end that closes nothing, surface events
 * of a step that is not open.
 */
export const evolveTurns = (state: TurnFoldState, event: LogEvent): E.Either<ImpossibleEventError, TurnFoldState> => {
  if (!isKnownEvent(event)) return same(state);
  switch (event.type) {
    case 'turn/start': {
      const { turn } = event.data;
      if (state.openTurn) return refuse(event, `turn ${state.openTurn.turn} is still open`);
      if (turn !== state.lastTurn + 1) return refuse(event, `turn ${turn} does not follow turn ${state.lastTurn}`);
      return E.right(turnState(turn, { turn, startSeq: event.seq, endSeq: null, reason: null, steps: 0 }, null, state.lastClosed));
    }
    case 'step/start': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn) return refuse(event, `turn ${turn} is not open`);
      if (state.openStep !== null) return refuse(event, `step ${state.openStep} is still open`);
      if (step !== state.openTurn.steps + 1) return refuse(event, `step ${step} does not follow step ${state.openTurn.steps}`);
      const open = state.openTurn;
      return E.right(turnState(state.lastTurn, { turn: open.turn, startSeq: open.startSeq, endSeq: open.endSeq, reason: open.reason, steps: step }, step, state.lastClosed));
    }
    case 'step/end': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn || state.openStep !== step) return refuse(event, `step ${turn}.${step} is not open`);
      return E.right(turnState(state.lastTurn, state.openTurn, null, state.lastClosed));
    }
    case 'assistant/chunk':
    case 'assistant/message':
    case 'request/error':
    case 'tool/call':
    case 'tool/result': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn || state.openStep !== step) return refuse(event, `step ${turn}.${step} is not open`);
      return same(state);
    }
    case 'turn/end': {
      const { turn, reason } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn) return refuse(event, `turn ${turn} is not open`);
      if (state.openStep !== null) return refuse(event, `step ${state.openStep} is still open`);
      const open = state.openTurn;
      const closed: TurnRecord = { turn: open.turn, startSeq: open.startSeq, endSeq: event.seq, reason, steps: open.steps };
      return E.right(turnState(state.lastTurn, null, null, closed));
    }
    default:
      return same(state);
  }
};
