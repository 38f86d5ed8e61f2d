import type { EventMetadata } from '../../domain/event-metadata.js';
import { isKnownEvent, type AbortCause, type AssistantMessageData, type LogEvent, type ToolResultData } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import { isHookActor } from '../../runtime/hooks.js';
import type { RecordedLog } from './recorded-log.js';
import { answerOf, concludedBy, failureOf, outcomeOf, type Pending } from './recorded-ports.js';
import { noteReadmitted, type Readmitted } from './resent-inputs.js';

/**
 * What a replay check does for each recorded event that needs the outside world: the recorded input re-admitted,
 * the recorded answer given, the recorded tool outcome settled, the recorded cancel issued, at the point the
 * recording has it.
 */

/** The recording a replay check drives from, and what the runtime it drives is waiting on. */
export interface RecordedScene {
  readonly log: RecordedLog;
  /** The events compared (the log without its signed chain heads). */
  readonly recorded: readonly LogEvent[];
  /** Does the log record metadata (provenance, causation)? */
  readonly metadataRecorded: boolean;
  readonly pending: Pending;
  /** The input the replay re-admitted last (a send of it by the deployment's code right after is that input). */
  readonly readmitted: Readmitted;
  /** The calls settled ahead of their results' turn (before a recorded abort; freeing a full pool). */
  readonly settledAhead: Set<string>;
}

/** A claim: the runtime's own removal (no outcome, nothing inserted). */
const isClaim = (data: { readonly removedCount?: number; readonly outcome?: string; readonly inserted: readonly unknown[] }): boolean =>
  data.removedCount !== undefined && data.outcome === undefined && data.inserted.length === 0;

/** Metadata without its cause (the replay's own events are caused by their own). */
export const withoutCause = (m: EventMetadata | undefined): EventMetadata => {
  const { causationId: _c, ...rest } = m ?? {};
  return rest;
};

/** The cause a turn's recorded abort had (a recorded cancel re-issued with it). */
const abortCause = ({ log }: RecordedScene, turn: number): AbortCause => {
  const end = log.endOf(turn);
  return end?.kind === 'aborted' ? end.reason : { kind: 'user' };
};
/** The provenance of a turn's recorded end (a recorded cancel re-issued with it). */
const turnEndMetadata = ({ recorded }: RecordedScene, turn: number): EventMetadata => {
  const end = recorded.find((e) => e.type === 'turn/end' && (e.data as { turn: number }).turn === turn);
  return withoutCause(end?.metadata);
};
/**
 * The wait before a retry, `position` events into the replay (its failed attempt's `request/error` already
 * written): over at once when the recording has the retry, or when it has none in a turn that ended with an error
 * (the checkpoint before the retry's request failed); otherwise an abort ended the wait: the recorded cancel is
 * issued, and the wait lasts until the runtime's abort ends it.
 */
export const backoffAsRecorded = (scene: RecordedScene, live: Agent, position: number, signal: AbortSignal): Promise<void> => {
  const { recorded } = scene;
  const failed = recorded.slice(0, position).findLast((e) => e.type === 'request/error');
  if (!failed || signal.aborted) return Promise.resolve();
  const { turn, step } = failed.data as { turn: number; step: number };
  const ofStep = (e: LogEvent): boolean => {
    const d = e.data as { turn?: number; step?: number };
    return d.turn === turn && d.step === step;
  };
  const retried = recorded.slice(position).some((e) => (e.type === 'assistant/message' || e.type === 'assistant/chunk' || e.type === 'request/error') && ofStep(e));
  // no attempt after it in a turn that ended with an error: the wait ended, and the checkpoint before the retry failed
  if (retried || scene.log.endOf(turn)?.kind === 'error') return Promise.resolve();
  const over = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  live.cancel(abortCause(scene, turn), { keepInbox: true, metadata: turnEndMetadata(scene, turn) });
  return over;
};

/**
 * Was a recorded answer cut at its token limit? Its `finishReason` says so when the log records it: the runtime
 * writes `max-tokens` on every such answer, so in a turn that ended `max-tokens` and records one, an answer without
 * it was not cut. A log written before the runtime recorded it has none: a turn ends max-tokens when any of its
 * answers finished so (it is sticky: later tool rounds close the turn without a follow-up request), and the runtime
 * logs such an answer without its tool calls, so in a max-tokens turn an answer without tool calls is given as cut,
 * one with tool calls as finished for its calls, which ran.
 */
const cutAnswer = ({ recorded, log }: RecordedScene, answer: AssistantMessageData): boolean => {
  if (answer.finishReason !== undefined) return answer.finishReason === 'max-tokens';
  if (log.endOf(answer.turn)?.kind !== 'max-tokens') return false;
  const recordsReasons = recorded.some((e) => e.type === 'assistant/message' && (e.data as AssistantMessageData).turn === answer.turn && (e.data as AssistantMessageData).finishReason !== undefined);
  return !recordsReasons && !answer.message.content.some((b) => b.type === 'tool-call');
};

/**
 * Is `next` (at position `index`) an input from outside the runtime — a send, a queue edit or a cancel's removal —
 * rather than the runtime's own claim, what a tool result staged, or what a deciding hook's listener sent (its
 * actor `hook:<name>`: today's hooks must send it again, the replay does not re-admit it)?
 */
export const isOutsideInput = ({ recorded, metadataRecorded }: RecordedScene, next: LogEvent | undefined, index: number): next is LogEvent & { readonly type: 'agent/inbox/spliced' } => {
  if (next?.type !== 'agent/inbox/spliced' || !isKnownEvent(next)) return false;
  const data = next.data as { readonly target: string; readonly removedCount?: number; readonly outcome?: string; readonly inserted: readonly unknown[] };
  if (isClaim(data) || next.metadata?.actor?.startsWith('tool:') || isHookActor(next.metadata?.actor)) return false;
  // in a log without metadata, a next-step insertion right after a tool result is what the result staged
  return metadataRecorded || recorded[index - 1]?.type !== 'tool/result' || data.target !== 'next-step' || data.removedCount !== undefined;
};

/** The recorded result of call `callId` at or after position `from` (its index), or -1. */
const resultIndex = (recorded: readonly LogEvent[], from: number, callId: string): number =>
  recorded.findIndex((e, i) => i >= from && e.type === 'tool/result' && (e.data as ToolResultData).message.callId === callId);

/** Did call `callId`'s recorded result (at or after `from`) settle before its turn's abort: not aborted, not marked late? */
const settledBeforeAbort = (recorded: readonly LogEvent[], from: number, callId: string): boolean => {
  const at = resultIndex(recorded, from, callId);
  if (at < 0) return false;
  const data = recorded[at]!.data as ToolResultData;
  const code = data.error?.code;
  return code !== 'ABORTED' && code !== 'ABORTED_BEFORE_DISPATCH' && code !== 'STEP_FAILED' && data.meta?.settledAfterAbort !== true;
};

/** Settles the pending call `callId` with its recorded outcome (its result at or after `from`); false when it has none. */
const settleAsRecorded = ({ recorded, metadataRecorded, pending }: RecordedScene, callId: string, from: number): boolean => {
  const call = pending.calls.get(callId);
  const at = resultIndex(recorded, from, callId);
  if (!call || at < 0) return false;
  const name = recorded.find((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === callId);
  const recordedOutcome = outcomeOf(recorded, at, (name?.data as { name: string } | undefined)?.name ?? '', !metadataRecorded);
  call.settle(!('thrown' in recordedOutcome) && concludedBy(recorded, at) ? { ...recordedOutcome, concludesTurn: true as const } : recordedOutcome);
  return true;
};

/**
 * Does what the next recorded event (`next`, at position `index`) needs from outside the runtime (`live`): re-admits
 * an input, answers a request, settles a tool call, records a child's lifecycle, wakes or cancels; false when nothing
 * from outside can produce it (the runtime writes it on its own, or it cannot); `again` when it did part of it (settled
 * calls the runtime must take in first) and is to be asked again at the same position.
 */
export const actFor = (scene: RecordedScene, live: Agent, next: LogEvent, index: number): boolean | 'again' => {
  const { log, recorded, metadataRecorded, pending } = scene;
  if (!isKnownEvent(next)) return false;
  const request = pending.request;
  const requested = (d: { turn: number; step: number }): boolean => request !== null && request.request.turn === d.turn && request.request.step === d.step;
  switch (next.type) {
    case 'agent/inbox/spliced': {
      if (!isOutsideInput(scene, next, index)) return false;
      try {
        const before = live.events.at(-1);
        live.readmit(next.data, next.metadata);
        noteReadmitted(scene.readmitted, before, live.events.at(-1));
        return true;
      } catch {
        return false;
      }
    }
    case 'assistant/chunk':
      if (!requested(next.data)) return false;
      request!.request.onChunk({ type: next.data.chunk.type, text: next.data.chunk.text });
      return true;
    case 'assistant/message': {
      if (!requested(next.data)) return false;
      if (next.data.interrupted) {
        live.cancel(abortCause(scene, next.data.turn), { keepInbox: true, metadata: turnEndMetadata(scene, next.data.turn) });
        return true;
      }
      pending.request = null;
      request!.answer(answerOf(next.data, cutAnswer(scene, next.data)));
      return true;
    }
    case 'request/error':
      if (!requested(next.data)) return false;
      pending.request = null;
      request!.answer(failureOf(next.data));
      return true;
    case 'tool/result': {
      const call = pending.calls.get(next.data.message.callId);
      if (!call) return false;
      // an outcome the runtime marked as settled after the abort (lateToolResults 'keep') was settled after the cancel too
      if (next.data.error?.code === 'ABORTED' || next.data.meta?.settledAfterAbort === true) {
        // the step's other calls whose results show they settled before the abort (they wait for this one's, in model
        // order) are settled first, and the runtime takes them in before the cancel
        const dispatched = recorded.slice(0, index).flatMap((e) => (e.type === 'tool/call' ? [(e.data as { callId: string }).callId] : []));
        const before = dispatched.filter((id) => id !== next.data.message.callId && !scene.settledAhead.has(id) && settledBeforeAbort(recorded, index + 1, id));
        // one whose body has not started yet (its checkpoint is held): the runtime's writes go through first
        if (before.some((id) => !pending.calls.has(id))) return false;
        if (before.length > 0) {
          for (const id of before) settleAsRecorded(scene, id, index);
          for (const id of before) scene.settledAhead.add(id);
          return 'again';
        }
        live.cancel(abortCause(scene, next.data.turn), { keepInbox: true, metadata: turnEndMetadata(scene, next.data.turn) });
      }
      settleAsRecorded(scene, next.data.message.callId, index);
      return true;
    }
    case 'tool/call': {
      // a call the runtime has not dispatched yet, while calls run: the pool is full, and a call that settled freed it.
      // The log keeps results in model order only; the one that settled is a later call than the earliest running one
      // (the earliest's result would have been written before this call): the latest running one is settled
      const running = [...pending.calls.keys()];
      if (running.length < 2) return false;
      if (!settleAsRecorded(scene, running.at(-1)!, index)) return false;
      scene.settledAhead.add(running.at(-1)!);
      return 'again';
    }
    case 'subagent/descriptor':
    case 'subagent/start':
    case 'subagent/end':
      // a child's lifecycle, as the children manager recorded it (the child runs in its own session, not here)
      live.recordChildEvent(next.type, next.data as never);
      return true;
    case 'turn/start':
      // a recorded turn whose waking input was canceled before it started claims nothing: it is woken all the same
      return live.status === 'idle' && live.wake({ evenIfEmpty: true, ...(next.metadata ? { metadata: next.metadata } : {}) });
    case 'step/end':
      // a request the turn's abort struck before it answered anything: the recorded cancel is issued during it
      if (!requested(next.data) || log.endOf(next.data.turn)?.kind !== 'aborted') return false;
      live.cancel(abortCause(scene, next.data.turn), { keepInbox: true, metadata: turnEndMetadata(scene, next.data.turn) });
      return true;
    case 'turn/end':
      if (next.data.reason.kind !== 'aborted' || live.status === 'idle') return false;
      live.cancel(next.data.reason.reason, { keepInbox: true, metadata: withoutCause(next.metadata) });
      return true;
    default:
      return false;
  }
};
