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
export const initialConsumedWorkState = (): ConsumedWorkState => ({ droppedUnrun: false, stepped: NONE, claimed: NONE });

/** `completed` with a claim but no step means the claim was rewritten away: nothing ran, nothing dropped. Unknown kinds account. */
export const accountsForClaim = (reason: TurnEndReason | { readonly kind: string }): boolean => reason.kind !== 'completed';

const withAdded = (turns: readonly number[], n: number): readonly number[] => (turns.includes(n) ? turns : [...turns, n]);
const without = (turns: readonly number[], n: number): readonly number[] => (turns.includes(n) ? turns.filter((t) => t !== n) : turns);

/** One event into the accounting state. Other event types leave it unchanged. */
export const evolveConsumedWork = (state: ConsumedWorkState, event: LogEvent): ConsumedWorkState => {
  if (!isKnownEvent(event)) return state;
  switch (event.type) {
    case 'turn/start':
      return { ...state, open: event.data.turn };
    case 'step/start':
      return { ...state, stepped: withAdded(state.stepped, event.data.turn) };
    case 'agent/inbox/spliced': {
      const d = event.data;
      if (d.removedCount === undefined) return state;
      if (d.outcome === 'canceled') return d.inserted.length === 0 && !state.droppedUnrun ? { ...state, droppedUnrun: true } : state;
      return state.open === undefined ? state : { ...state, claimed: withAdded(state.claimed, state.open) };
    }
    case 'turn/end': {
      const { turn, reason } = event.data;
      const accounts = state.stepped.includes(turn) || (state.claimed.includes(turn) && accountsForClaim(reason));
      const base = { stepped: without(state.stepped, turn), claimed: without(state.claimed, turn), open: undefined };
      return accounts ? { ...base, end: { seq: event.seq, turn, reason }, droppedUnrun: false } : { ...state, ...base };
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
