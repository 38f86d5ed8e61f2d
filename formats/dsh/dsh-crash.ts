import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { dshEventId } from './dsh-map.js';

/**
 * The harness's crash rule, read the way the harness reads it: a log whose last turn has no `turn/end` (the process
 * stopped inside it) is closed, when the harness loads it, by synthetic events appended after the last one written —
 * for each tool call the turn's answers asked for that has no `tool/result`, an error result (`TOOL_OUTCOME_UNKNOWN`
 * when its `tool/call` was written, else `TOOL_NOT_STARTED`); then `step/end` when a step is open; then
 * `turn/end {reason: {kind: "interrupted"}}`. They continue the seqs and reuse the last event's time. So the inbox
 * and consumed work read a crashed log as the harness does when it resumes it: the interrupted turn accounts for the
 * input it claimed, which is not restored.
 *
 * The tracker follows steerlog's mapped envelopes (seq = harness seq + 1); the closers are steerlog events too.
 */
export interface DshOpenTurn {
  /** Follows one mapped event. */
  push(envelope: RawEnvelope): void;
  /** The closers for the turn still open after the last event pushed (none when no turn is open). */
  closers(): RawEnvelope[];
}

type Obj = Record<string, unknown>;

/** The text a synthesized tool result carries (what the model would be told on a resume). */
const RESULT_TEXT = {
  TOOL_OUTCOME_UNKNOWN: 'The tool call was recorded as started, but the log ends before its result: its outcome is unknown.',
  TOOL_NOT_STARTED: 'The tool call was asked for, but the log ends before it was recorded as started.',
} as const;

/** Tracks the open turn, its open step and its unanswered tool calls over a harness log's mapped events. */
export const createOpenTurnTracker = (): DshOpenTurn => {
  let turn: number | null = null;
  let step: number | null = null;
  // call id → the step whose answer asked for it, and the report seq of its tool/call (if written)
  const calls = new Map<string, { step: number; callSeq: number | null }>();
  let last: RawEnvelope | null = null;
  return {
    push(envelope) {
      last = envelope;
      const data = envelope.data as Obj;
      switch (envelope.type) {
        case 'turn/start':
          turn = data.turn as number;
          step = null;
          calls.clear();
          return;
        case 'turn/end':
          turn = null;
          step = null;
          calls.clear();
          return;
        case 'step/start':
          step = data.step as number;
          return;
        case 'step/end':
          step = null;
          calls.clear();
          return;
        case 'assistant/message':
          for (const b of (data.message as { content: Obj[] }).content) if (b.type === 'tool-call') calls.set(b.callId as string, { step: data.step as number, callSeq: null });
          return;
        case 'tool/call': {
          const c = calls.get(data.callId as string);
          if (c) c.callSeq = envelope.seq;
          return;
        }
        case 'tool/result':
          calls.delete((data.message as Obj).callId as string);
          return;
        default:
          return;
      }
    },
    closers() {
      if (turn === null || last === null) return [];
      let seq = last.seq + 1;
      const time = last.time;
      const out: RawEnvelope[] = [];
      const envelope = (type: string, data: unknown): RawEnvelope => ({ seq, id: dshEventId(seq++), time, type, data });
      for (const [callId, c] of calls) {
        const code = c.callSeq === null ? 'TOOL_NOT_STARTED' : 'TOOL_OUTCOME_UNKNOWN';
        out.push(
          envelope('tool/result', {
            turn,
            step: c.step,
            // the id the harness gives it: its call id and harness seq
            message: { role: 'tool', callId, content: [{ type: 'text', text: RESULT_TEXT[code] }], isError: true, id: `interrupted-tool-result-${callId}-${seq - 1}` },
            error: { name: code === 'TOOL_NOT_STARTED' ? 'ToolNotStartedError' : 'ToolOutcomeUnknownError', code },
          }),
        );
      }
      if (step !== null) out.push(envelope('step/end', { turn, step }));
      out.push(envelope('turn/end', { turn, reason: { kind: 'interrupted' } }));
      return out;
    },
  };
};
