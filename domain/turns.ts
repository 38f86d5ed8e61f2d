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
export const initialTurnFoldState = (): TurnFoldState => ({ lastTurn: 0, openTurn: null, openStep: null, lastClosed: null });

type StepRef = { turn: number; step: number };

/**
 * One event into the turn fold, refusing events that cannot happen where they stand: a turn/start while a turn
 * is open or out of sequence, a step outside its turn, a step/end or turn/end that closes nothing, surface events
 * of a step that is not open.
 */
export const evolveTurns = (state: TurnFoldState, event: LogEvent): E.Either<ImpossibleEventError, TurnFoldState> => {
  const impossible = (reason: string) => E.left(new ImpossibleEventError(event.seq, event.type, reason));
  if (!isKnownEvent(event)) return E.right(state);
  switch (event.type) {
    case 'turn/start': {
      const { turn } = event.data;
      if (state.openTurn) return impossible(`turn ${state.openTurn.turn} is still open`);
      if (turn !== state.lastTurn + 1) return impossible(`turn ${turn} does not follow turn ${state.lastTurn}`);
      return E.right({ ...state, lastTurn: turn, openTurn: { turn, startSeq: event.seq, endSeq: null, reason: null, steps: 0 }, openStep: null });
    }
    case 'step/start': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn) return impossible(`turn ${turn} is not open`);
      if (state.openStep !== null) return impossible(`step ${state.openStep} is still open`);
      if (step !== state.openTurn.steps + 1) return impossible(`step ${step} does not follow step ${state.openTurn.steps}`);
      return E.right({ ...state, openTurn: { ...state.openTurn, steps: step }, openStep: step });
    }
    case 'step/end': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn || state.openStep !== step) return impossible(`step ${turn}.${step} is not open`);
      return E.right({ ...state, openStep: null });
    }
    case 'assistant/chunk':
    case 'assistant/message':
    case 'tool/call':
    case 'tool/result': {
      const { turn, step } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn || state.openStep !== step) return impossible(`step ${turn}.${step} is not open`);
      return E.right(state);
    }
    case 'turn/end': {
      const { turn, reason } = event.data;
      if (!state.openTurn || state.openTurn.turn !== turn) return impossible(`turn ${turn} is not open`);
      if (state.openStep !== null) return impossible(`step ${state.openStep} is still open`);
      const closed: TurnRecord = { ...state.openTurn, endSeq: event.seq, reason };
      return E.right({ ...state, openTurn: null, openStep: null, lastClosed: closed });
    }
    default:
      return E.right(state);
  }
};
