import type { EventMetadata } from '../../domain/event-metadata.js';
import { isKnownEvent, type AbortCause, type LogEvent } from '../../domain/events.js';

/**
 * The turns a recorded session's cancel aborted, as a counterfactual replay re-issues them: each at the step it
 * struck and whether during that step's request (phase 1) or its tool round (phase 2), with the recorded cause and
 * the canceller's provenance. A cancel between turns aborted nothing and is not listed.
 */

/** A recorded cancel of a turn. */
export interface RecordedCancel {
  readonly turn: number;
  readonly step: number;
  /** 1 during the step's request, 2 during its tool round. */
  readonly phase: 1 | 2;
  readonly cause: AbortCause;
  /** The recorded `turn/end`'s metadata, without its cause (the replay's own events are caused by their own). */
  readonly metadata: EventMetadata;
}

/** The cancels that aborted a turn at or after event `boundary` of `events`. */
export const recordedCancels = (events: readonly LogEvent[], boundary: number): RecordedCancel[] => {
  const out: RecordedCancel[] = [];
  let step: { turn: number; step: number; answered: boolean } | null = null;
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'turn/start') step = null;
    else if (e.type === 'step/start') step = { ...e.data, answered: false };
    else if (e.type === 'assistant/message' && !e.data.interrupted && step) step.answered = true;
    else if (e.type === 'turn/end' && e.seq >= boundary && e.data.reason.kind === 'aborted' && step && step.turn === e.data.turn) {
      const { causationId: _c, ...metadata } = e.metadata ?? {};
      out.push({ turn: step.turn, step: step.step, phase: step.answered ? 2 : 1, cause: e.data.reason.reason, metadata });
    }
  }
  return out;
};
