import type { AbortCause, InboxTarget, TurnEndReason, TurnError } from './events.js';

/**
 * The driver's decisions as pure functions (docs/protocol.md §8). The async loop in runtime/ only performs
 * effects (hooks, the model call, tool bodies, appends) and asks these functions what to do next.
 */

/** Which list a step boundary claims: the turn's first boundary claims next-turn (and next-step), later ones next-step only. */
export const claimTargetAt = (boundary: number): InboxTarget => (boundary === 0 ? 'next-turn' : 'next-step');

/** What the pre-step waterfall decided for a proposed step. */
export type PreStepDecision<M> = { readonly kind: 'enter'; readonly messages: readonly M[] } | { readonly kind: 'reject' };

/** What a step boundary leads to. */
export type BoundaryOutcome =
  | { readonly kind: 'run-step' }
  /** Close the turn; `driver` says whether the driver may continue into another turn afterwards. */
  | { readonly kind: 'close-turn'; readonly reason: TurnEndReason; readonly driver: DriverAfterTurn };

/** After a turn closes: continue if input is pending (normal close), or stop and park whatever is pending. */
export type DriverAfterTurn = 'continue-if-pending' | 'stop';

/**
 * The decision at a step boundary, given the pre-step decision, the steps entered so far in this turn and the
 * reason the turn is about to end with (null while the model is owed a continuation):
 * - reject → blocked, driver stops;
 * - the turn was ending and nothing was entered → close with that reason (normal close);
 * - nothing entered at the turn's first boundary → completed without a step, driver stops;
 * - otherwise → run a step (a later boundary with nothing entered still runs one: the model continues after tool results).
 */
export const decideBoundary = <M>(decision: PreStepDecision<M>, stepsEntered: number, ending: TurnEndReason | null): BoundaryOutcome => {
  if (decision.kind === 'reject') return { kind: 'close-turn', reason: { kind: 'blocked' }, driver: 'stop' };
  if (decision.messages.length === 0) {
    if (ending !== null) return { kind: 'close-turn', reason: ending, driver: 'continue-if-pending' };
    if (stepsEntered === 0) return { kind: 'close-turn', reason: { kind: 'completed' }, driver: 'stop' };
  }
  return { kind: 'run-step' };
};

/** How one step ended: the model stopped (completed), hit max tokens, or is owed a continuation after tools (null). */
export type StepResult = { readonly kind: 'completed' } | { readonly kind: 'max-tokens' } | null;

/** The step result from the model's finish and the committed tool results. */
export const stepResultOf = (finish: 'stop' | 'tool-calls' | 'max-tokens', toolCalls: number, anyConcluded: boolean): StepResult => {
  if (finish === 'max-tokens') return { kind: 'max-tokens' };
  if (toolCalls === 0) return { kind: 'completed' };
  return anyConcluded ? { kind: 'completed' } : null;
};

/** Merges a step's result into the turn's ending reason: max-tokens is sticky, otherwise the latest step decides. */
export const mergeStepResult = (ending: TurnEndReason | null, step: StepResult): TurnEndReason | null =>
  ending?.kind === 'max-tokens' ? ending : step;

/**
 * After a step: the turn is ending and next-step is empty → ask turn-stopping listeners (they may steer or inject).
 * `concludesTurn` never skips input already in next-step.
 */
export const shouldAskTurnStopping = (ending: TurnEndReason | null, nextStepSize: number): boolean => ending !== null && nextStepSize === 0;

/** After turn-stopping: close when the turn is ending and next-step is still empty; else another step in the same turn. */
export const shouldCloseAfterStep = (ending: TurnEndReason | null, nextStepSize: number): boolean => ending !== null && nextStepSize === 0;

/** Continue into another turn only after a normal close with input pending (next-step counts too). */
export const continuesIntoNextTurn = (driver: DriverAfterTurn, hasPending: boolean): boolean => driver === 'continue-if-pending' && hasPending;

/** The reason a turn ends with when an exception escapes it: aborted (first cause) if the signal was aborted, else error. */
export const failureReason = (aborted: AbortCause | null, error: TurnError): TurnEndReason =>
  aborted ? { kind: 'aborted', reason: aborted } : { kind: 'error', error };

/** Public status from the private phase: maintenance reports idle. */
export type DriverPhase = 'idle' | 'maintenance' | 'running';
/** The status an agent reports for a driver phase (maintenance reports idle). */
export const publicStatus = (phase: DriverPhase): 'idle' | 'running' => (phase === 'running' ? 'running' : 'idle');

/**
 * Whether a waking send to a non-idle agent latches a wake (docs/protocol.md §8, §9): never when the cause is
 * disposal; always during maintenance; after the active turn was aborted; and — so that no send is stranded
 * (docs/protocol.md §12) — once the driver has closed its last turn and is retiring (whatever that turn's
 * reason), so a send that misses the driver's last "anything pending?" check still runs.
 * A live driver that is not retiring claims the work itself: no latch.
 */
export const latchesWake = (phase: Exclude<DriverPhase, 'idle'>, abortedBy: AbortCause | null, retiring = false): boolean => {
  if (abortedBy?.kind === 'disposed') return false;
  return phase === 'maintenance' || abortedBy !== null || retiring;
};
