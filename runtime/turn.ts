import type { EventMetadata } from '../domain/event-metadata.js';
import type { AbortCause, InboxTarget, TurnEndReason } from '../domain/events.js';
import { hasPending } from '../domain/inbox/inbox-state.js';
import * as L from '../domain/inbox/pending-list.js';
import type { UserMessage } from '../domain/message.js';
import {
  claimTargetAt,
  continuesIntoNextTurn,
  decideBoundary,
  failureReason,
  mergeStepResult,
  shouldAskTurnStopping,
  shouldCloseAfterStep,
  type DriverAfterTurn,
  type StepResult,
} from '../domain/turn-machine.js';
import type { HookRegistry } from './hooks.js';
import { runModelStep, TurnAborted, type ModelStepPort } from './model-step.js';
import { runPreStep } from './pre-step.js';
import { errorFacts } from './turn-error.js';
import { errorChain, RuntimeError } from './errors.js';

/**
 * How a turn's error begins when the checkpoint before its first pre-step failed (the store's error chain follows):
 * `checkpoint before turn <n>'s first step failed: `.
 */
export const firstCheckpointFailed = (turn: number): string => `checkpoint before turn ${turn}'s first step failed: `;

/** The agent's phase while its driver runs turns; a turn advances `turn` and `step` and may renew `abort`. */
export interface RunningPhase {
  kind: 'running';
  abort: AbortController;
  turn: number;
  step: number;
  wakeRequested: boolean;
  /** The driver closed its last turn and is about to go idle: a waking send now is latched (no retirement gap). */
  retiring: boolean;
}

/**
 * The system prompt of an agent of type `A` (`AgentOptions.systemPrompt`): a string, or a function assembling it at
 * every proposed step; none when undefined.
 */
export type SystemPromptOf<A> =
  | string
  | ((ctx: { readonly agent: A; readonly turn: number; readonly step: number; readonly signal: AbortSignal }) => string | Promise<string>)
  | undefined;

/**
 * What one turn needs from its agent (of type `A`: the Agent; a parameter, so this module does not import the
 * agent's): what a model step needs, plus the hooks, the system prompt and the claim.
 */
export interface TurnPort<A> extends ModelStepPort<A> {
  readonly hooks: HookRegistry<A>;
  readonly systemPrompt: SystemPromptOf<A>;
  /**
   * Claims the pending items of `target` (the durable splices carry `metadata`): the claimed batch, and the id of the
   * last splice appended (none when nothing was pending).
   */
  readonly claim: (target: InboxTarget, metadata: EventMetadata | undefined) => { readonly claimed: readonly UserMessage[]; readonly spliceId: string | undefined };
  /** The provenance of the wake this turn runs (once: the next turn gets none), recorded on its `turn/start`. */
  readonly takeWoken: () => EventMetadata | undefined;
  /** The provenance of the cancel that aborted this turn (once), recorded on its `turn/end`. */
  readonly takeStopped: () => EventMetadata | undefined;
}

/** Metadata naming the event that caused this one (none when the cause is unknown). */
export const causedBy = (eventId: string | undefined): EventMetadata | undefined => (eventId === undefined ? undefined : { causationId: eventId });

const throwIfAborted = (p: RunningPhase): void => {
  if (p.abort.signal.aborted) throw new TurnAborted();
};

/** The driver stops after this turn: from now until idle, waking sends are latched. */
const retire = (p: RunningPhase): false => {
  p.retiring = true;
  return false;
};

const reportError = <A>(port: TurnPort<A>, turn: number, step: number, e: unknown): void => {
  port.hooks.emit('error', { turn, step, error: errorFacts(e) });
};

const assemble = async <A>(port: TurnPort<A>, turn: number, step: number, signal: AbortSignal): Promise<string | undefined> => {
  const sp = port.systemPrompt;
  if (sp === undefined || typeof sp === 'string') return sp;
  return sp({ agent: port.agent, turn, step, signal });
};

/** One turn (docs/protocol.md §8) of the running driver `p`. Returns whether the driver continues into another turn. */
export const runTurn = async <A>(port: TurnPort<A>, p: RunningPhase): Promise<boolean> => {
  const { log, hooks, agent } = port;
  throwIfAborted(p);
  const n = p.turn + 1;
  /** Id of this turn's turn/start: the cause of its claims, steps and turn/end. */
  let turnStartId: string;
  /** Id of the latest claim splice: the cause of the user/messages it entered. */
  let claimId: string | undefined;
  try {
    const woken = port.takeWoken();
    turnStartId = log.append('turn/start', { turn: n }, woken ? { metadata: woken } : {}).id;
  } catch (e) {
    reportError(port, n, 0, e);
    return retire(p);
  }
  p.turn = n;
  p.step = 0;
  const signal = p.abort.signal;
  let ending: TurnEndReason | null = null;
  let reason: TurnEndReason = { kind: 'completed' };
  let driver: DriverAfterTurn = 'stop';
  let boundary = 0;
  let stepsEntered = 0;
  try {
    for (;;) {
      throwIfAborted(p);
      const k = p.step + 1;
      const { claimed, spliceId } = port.claim(claimTargetAt(boundary), causedBy(turnStartId));
      claimId = spliceId ?? claimId;
      // fail closed: the enqueue, turn/start and claim are durable before the first pre-step runs; a failure says
      // which write failed (the turn/end records it, and a replay check fails the same write)
      if (boundary === 0) {
        try {
          await log.checkpoint();
        } catch (e) {
          throw new RuntimeError('checkpoint-failed', `${firstCheckpointFailed(n)}${errorChain(e)}`, { cause: e });
        }
        if (port.gate) await port.gate.next();
      }
      boundary++;
      const system = await assemble(port, n, k, signal);
      throwIfAborted(p);
      const decision = await runPreStep(hooks.decidingListeners('pre-step'), { agent, messages: claimed, turn: n, step: k, signal });
      throwIfAborted(p);
      const outcome = decideBoundary(decision, stepsEntered, ending);
      if (outcome.kind === 'close-turn') {
        reason = outcome.reason;
        driver = outcome.driver;
        break;
      }
      const entered = decision.kind === 'enter' ? decision.messages : [];
      log.append('step/start', { turn: n, step: k }, { metadata: causedBy(turnStartId) });
      p.step = k;
      stepsEntered++;
      let result: StepResult;
      try {
        for (const m of entered) log.append('user/message', m, { metadata: causedBy(claimId) });
        result = await runModelStep(port, { turn: n, step: k, system, signal });
      } finally {
        log.append('step/end', { turn: n, step: k });
      }
      ending = mergeStepResult(ending, result);
      throwIfAborted(p);
      if (shouldAskTurnStopping(ending, L.size(port.inbox().nextStep))) {
        for (const listener of hooks.decidingListeners('turn-stopping')) await listener({ agent, turn: n, signal });
        throwIfAborted(p);
      }
      if (shouldCloseAfterStep(ending, L.size(port.inbox().nextStep))) {
        reason = ending!;
        driver = 'continue-if-pending';
        break;
      }
    }
  } catch (e) {
    const cause = signal.aborted ? (signal.reason as AbortCause) : null;
    const facts = errorFacts(e);
    reason = failureReason(cause, facts);
    driver = 'stop';
    if (!cause) hooks.emit('error', { turn: n, step: p.step, error: facts });
  }
  try {
    const stopped = reason.kind === 'aborted' ? port.takeStopped() : undefined;
    log.append('turn/end', { turn: n, reason }, { metadata: { ...stopped, causationId: turnStartId } });
  } catch (e) {
    reportError(port, n, p.step, e);
    return retire(p);
  }
  if (!continuesIntoNextTurn(driver, hasPending(port.inbox()))) return retire(p);
  p.abort = new AbortController();
  p.wakeRequested = false;
  p.step = 0;
  return true;
};
