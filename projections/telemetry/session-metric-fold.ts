import { isKnownEvent, type InboxSplicedData, type LogEvent, type SessionCreatedData, type ToolResultData } from '../../domain/events.js';
import type { UserMessage } from '../../domain/message.js';
import { createInboxTracker } from './inbox-tracker.js';

/**
 * The session metrics' own fold of one session's log: what the span derivation's spans tell the metrics (a turn's
 * duration by end reason, a model request's duration and token usage, a tool call's duration, the admitted→claimed
 * latency by class), kept without making the spans — no span ids, no attribute records, no span events. It follows
 * the derivation's rules exactly (`derive-spans.ts`): the same spans close at the same events, with the same times,
 * the same labels and in the same order (a histogram's sum is added in that order), so the metrics read the same
 * figures as when they were read off the derived spans (test/projections/telemetry/session-metric-fold.test.ts
 * holds the two side by side over random logs). Like the trusted derivation (`validate: false`), it trusts the log
 * (a live runtime's own events) and checks nothing.
 */

/** What the fold tells, each figure as its span (or inbox event) completes. @internal */
export interface SessionMetricSink {
  /** A turn ended (`turn/end` of an open turn): its end reason and duration (seconds). */
  turn(endReason: string, seconds: number): void;
  /**
   * A model request's span closed: its model (`''` without an answer), error type (`''` for none) and duration; the
   * answer's token counts when it reported usage.
   */
  chat(model: string, errorType: string, seconds: number, inputTokens: number | undefined, outputTokens: number | undefined): void;
  /** A tool call's span closed: its tool, error type (`''` for none) and duration. */
  tool(name: string, errorType: string, seconds: number): void;
  /** A message admitted (or moved) earlier was claimed: its class (`''` when unknown) and the time since (seconds). */
  claim(messageClass: string, seconds: number): void;
}

/** One session's metric fold: feed it the log's events in order, from seq 0. @internal */
export interface SessionMetricFold {
  readonly push: (event: LogEvent) => void;
}

interface ToolState {
  name: string;
  /** The time of the `tool/call` that opened it, or null while the answer only requested it. */
  opened: number | null;
}

interface StepState {
  /** Where the next model request starts (a time): the step's last event before it. */
  requestFrom: number;
  attempt: number;
  answered: boolean;
  requestPending: boolean;
  readonly tools: Map<string, ToolState>;
}

interface TurnState {
  readonly opened: number;
  step: StepState | null;
}

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

/** The class of an inbox message by the list it enters and its source (as the derivation names it). */
const classOf = (target: string, message: UserMessage): string => (target === 'next-turn' ? 'prompt' : message.source.kind === 'user' ? 'steering' : 'context');

/** Creates the metric fold of one session, telling `sink`. Each event costs O(1) amortized (plus its own size). */
export const createSessionMetricFold = (sink: SessionMetricSink): SessionMetricFold => {
  const tracker = createInboxTracker();
  let seedLength: number | undefined;
  let turn: TurnState | null = null;
  /** The class of each pending message, by id. */
  const pendingClass = new Map<string, string>();
  /** When each pending message was admitted (or moved), by id. */
  const admitted = new Map<string, number>();

  /** The spans a step leaves when it closes (not open): its unanswered first request, its calls without a result. */
  const closeStep = (s: StepState, at: number): void => {
    if (s.requestPending && s.attempt === 1) sink.chat('', 'no-answer', seconds(at - s.requestFrom), undefined, undefined);
    for (const tool of s.tools.values()) sink.tool(String(tool.name), 'no-result', seconds(at - (tool.opened ?? at)));
  };

  const splice = (event: LogEvent, d: InboxSplicedData, facts: ReturnType<typeof tracker.step>): void => {
    for (const m of d.inserted) pendingClass.set(m.id, classOf(d.target, m));
    const time = event.time;
    for (const f of facts) {
      if (f.kind === 'admitted' || f.kind === 'moved') admitted.set(f.id, time);
      else if (f.kind === 'canceled') admitted.delete(f.id);
      else if (f.kind === 'claimed') {
        const at = admitted.get(f.id);
        admitted.delete(f.id);
        if (at !== undefined) sink.claim(pendingClass.get(f.id) ?? '', seconds(time - at));
      }
    }
    for (const f of facts) if (f.kind === 'claimed' || f.kind === 'canceled') pendingClass.delete(f.id);
  };

  const push = (event: LogEvent): void => {
    const facts = tracker.step(event);
    const seq = event.seq;
    if (seq === 0 && event.type === 'session/created') {
      seedLength = (event.data as SessionCreatedData).seedLength;
      return;
    }
    if (seedLength !== undefined && seq >= 1 && seq <= seedLength + 1) return;
    if (!isKnownEvent(event)) return;
    const at = event.time;
    switch (event.type) {
      case 'agent/inbox/spliced':
        splice(event, event.data, facts);
        return;
      case 'turn/start':
        turn = { opened: at, step: null };
        return;
      case 'step/start':
        if (turn !== null) turn.step = { requestFrom: at, attempt: 1, answered: false, requestPending: true, tools: new Map() };
        return;
      case 'user/message': {
        const s = turn?.step;
        if (s && !s.answered && s.attempt === 1) s.requestFrom = at;
        return;
      }
      case 'request/error': {
        const s = turn?.step;
        if (!s) return;
        const d = event.data;
        sink.chat('', String(d.error.code ?? ''), seconds(at - s.requestFrom), undefined, undefined);
        s.attempt = d.attempt + 1;
        s.requestFrom = at;
        s.requestPending = d.retryInMs !== undefined;
        return;
      }
      case 'assistant/message': {
        const s = turn?.step;
        if (!s) return;
        const d = event.data;
        const source = d.message.source as { readonly model?: unknown } | undefined;
        const model = source && typeof source.model === 'string' ? source.model : '';
        const usage = d.usage;
        sink.chat(model, d.interrupted ? 'interrupted' : '', seconds(at - s.requestFrom), usage && typeof usage.inputTokens === 'number' ? usage.inputTokens : undefined, usage && typeof usage.outputTokens === 'number' ? usage.outputTokens : undefined);
        s.answered = true;
        s.requestPending = false;
        for (const b of d.message.content) {
          if (b.type !== 'tool-call' || s.tools.has(b.callId)) continue;
          s.tools.set(b.callId, { name: b.name, opened: null });
        }
        return;
      }
      case 'tool/call': {
        const s = turn?.step;
        if (!s) return;
        const d = event.data;
        const known = s.tools.get(d.callId);
        if (known) {
          known.name = d.name;
          known.opened = at;
        } else s.tools.set(d.callId, { name: d.name, opened: at });
        return;
      }
      case 'tool/result': {
        const s = turn?.step;
        if (!s) return;
        const d: ToolResultData = event.data;
        const callId = d.message.callId;
        const tool = s.tools.get(callId);
        const errorType = d.error ? String(d.error.code ?? '') : d.message.isError ? 'tool-error' : '';
        sink.tool(tool ? String(tool.name) : 'unknown', errorType, seconds(at - (tool?.opened ?? at)));
        s.tools.delete(callId);
        return;
      }
      case 'step/end':
        if (turn?.step) closeStep(turn.step, at);
        if (turn) turn.step = null;
        return;
      case 'turn/end': {
        if (!turn) return;
        if (turn.step) closeStep(turn.step, at);
        const reason: unknown = event.data.reason.kind;
        if (reason !== undefined) sink.turn(String(reason), seconds(at - turn.opened));
        turn = null;
        return;
      }
      default:
        return;
    }
  };

  return { push };
};
