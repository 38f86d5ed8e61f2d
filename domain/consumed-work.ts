import { isKnownEvent, type LogEvent, type TurnEndReason } from './events.js';

/**
 * Consumed-work accounting (docs/protocol.md §5): which turn last accounted for consumed input, and whether unrun
 * work was canceled after it. A turn *accounts* iff it stepped, or it claimed input and its reason accounts for a claim.
 */
export interface ConsumedWork {
  /** The latest accounting turn/end: its seq and turn, or undefined. */
  readonly end?: { readonly seq: number; readonly turn: number; readonly reason: TurnEndReason };
  /** Unrun work was canceled after `end` (a canceled splice that inserted nothing). */
  readonly droppedUnrun: boolean;
}

/** The consumed-work fold's state: the summary plus the open turn's step and claim marks. */
export interface ConsumedWorkState extends ConsumedWork {
  readonly open?: number;
  /** Turns that entered a step / claimed input, and have not ended yet (a handful at most: kept as arrays). */
  readonly stepped: readonly number[];
  readonly claimed: readonly number[];
}

const NONE: readonly number[] = Object.freeze([]);
/** The consumed-work fold's state before any event. */
export const initialConsumedWorkState = (): ConsumedWorkState => consumedState(undefined, false, undefined, NONE, NONE);

/**
 * A state with every field named, in one order (one object shape for every state, built without spreads: the fold
 * runs once per event). An absent `end` or `open` is `undefined`.
 */
const consumedState = (
  end: ConsumedWork['end'],
  droppedUnrun: boolean,
  open: number | undefined,
  stepped: readonly number[],
  claimed: readonly number[],
): ConsumedWorkState => ({ end, droppedUnrun, open, stepped, claimed });

/** `completed` with a claim but no step means the claim was rewritten away: nothing ran, nothing dropped. Unknown kinds account. */
export const accountsForClaim = (reason: TurnEndReason | { readonly kind: string }): boolean => reason.kind !== 'completed';

const withAdded = (turns: readonly number[], n: number): readonly number[] => (turns.includes(n) ? turns : [...turns, n]);
const without = (turns: readonly number[], n: number): readonly number[] => (turns.includes(n) ? turns.filter((t) => t !== n) : turns);

/** One event into the accounting state. Other event types leave it unchanged. */
export const evolveConsumedWork = (state: ConsumedWorkState, event: LogEvent): ConsumedWorkState => {
  if (!isKnownEvent(event)) return state;
  const { end, droppedUnrun, open, stepped, claimed } = state;
  switch (event.type) {
    case 'turn/start':
      return consumedState(end, droppedUnrun, event.data.turn, stepped, claimed);
    case 'step/start':
      return consumedState(end, droppedUnrun, open, withAdded(stepped, event.data.turn), claimed);
    case 'agent/inbox/spliced': {
      const d = event.data;
      if (d.removedCount === undefined) return state;
      if (d.outcome === 'canceled') return d.inserted.length === 0 && !droppedUnrun ? consumedState(end, true, open, stepped, claimed) : state;
      return open === undefined ? state : consumedState(end, droppedUnrun, open, stepped, withAdded(claimed, open));
    }
    case 'turn/end': {
      const { turn, reason } = event.data;
      const accounts = stepped.includes(turn) || (claimed.includes(turn) && accountsForClaim(reason));
      return accounts
        ? consumedState({ seq: event.seq, turn, reason }, false, undefined, without(stepped, turn), without(claimed, turn))
        : consumedState(end, droppedUnrun, undefined, without(stepped, turn), without(claimed, turn));
    }
    default:
      return state;
  }
};

/** `foldConsumedWork` over a log or an owned suffix. */
export const foldConsumedWork = (events: Iterable<LogEvent>): ConsumedWork => {
  let state = initialConsumedWorkState();
  for (const e of events) state = evolveConsumedWork(state, e);
  return state.end ? { end: state.end, droppedUnrun: state.droppedUnrun } : { droppedUnrun: state.droppedUnrun };
};
