import { isKnownEvent, type LogEvent, type RequestContextData, type RequestHeader, type RequestHeaderReason, type Usage } from '../domain/events.js';
import type { MessageClass } from '../domain/history-classification.js';
import { messageFates, type FateEntry } from '../domain/message-fate.js';
import { deriveModelMessages, type ModelMessage } from '../domain/model-messages.js';

/**
 * What exactly a model request of one step was given, from the log alone (`steerlog context`): the surface
 * messages of the log before the step's request, in order, as `deriveModelMessages` builds them (what the runtime
 * hands the model), the step's provenance (the `request/header` and `request/context` in effect), its token counts
 * when recorded, and the inputs that entered at that step, with their class and fate.
 */

/** No step `turn.step` in this log (or the log ends before its request). Stable `code`: `step-not-found`. */
export class StepNotFoundError extends Error {
  readonly code = 'step-not-found' as const;
  constructor(
    readonly turn: number,
    readonly step: number,
  ) {
    super(`the log has no step ${turn}.${step}`);
    this.name = 'StepNotFoundError';
  }
}
/** Is this a {@link StepNotFoundError}? (by its stable `code`) */
export const isStepNotFoundError = (e: unknown): e is StepNotFoundError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'step-not-found';

/** One input that entered the model at the step: its `user/message`, class and everything the log says happened to it. */
export interface EnteredInput {
  readonly seq: number;
  readonly id: string;
  /** prompt, steering or context (null: the log gives it none, e.g. a message no splice admitted). */
  readonly class: MessageClass | null;
  readonly source: string;
  /** Its fate, entry by entry (admitted, edited, moved, claimed, entered, …), in seq order. */
  readonly fate: readonly FateEntry[];
}

/** The context of one step's model request. */
export interface StepContext {
  readonly turn: number;
  readonly step: number;
  /** The step's `step/start`. */
  readonly startSeq: number;
  /** The seq the request is made at: everything before it is what the request was built from. */
  readonly requestSeq: number;
  /** The request's messages: the log's surface before `requestSeq`, in order. */
  readonly messages: readonly ModelMessage[];
  /** The `request/header` in effect (the latest one before the request); null: not recorded (an older log). */
  readonly header: { readonly seq: number; readonly reason: RequestHeaderReason; readonly header: RequestHeader } | null;
  /** The `request/context` in effect; null: not recorded. */
  readonly route: ({ readonly seq: number } & RequestContextData) | null;
  /** The requests the step made: 1, plus one per failed attempt (`request/error`). */
  readonly attempts: number;
  /** The tokens of the step's answer, when its `assistant/message` recorded them; null otherwise. */
  readonly usage: Usage | null;
  /** The inputs that entered at this step (its `user/message`s), in order. */
  readonly entered: readonly EnteredInput[];
}

/**
 * The events written while a step's request is built (its entered messages, its provenance, and inbox changes and
 * signed heads that may land meanwhile): the first other event of the step (the model's output, a failed request, an
 * event of another writer, the step's end) comes after the request was made.
 */
const BUILDING = new Set(['user/message', 'request/header', 'request/context', 'agent/inbox/spliced', 'chain/head']);

/** The context of step `turn.step` of a log (its events in seq order). Throws {@link StepNotFoundError}. */
export const stepContext = (events: readonly LogEvent[], turn: number, step: number): StepContext => {
  const start = events.findIndex((e) => e.type === 'step/start' && (e.data as { turn: number; step: number }).turn === turn && (e.data as { step: number }).step === step);
  if (start < 0) throw new StepNotFoundError(turn, step);
  let end = start + 1;
  while (end < events.length && BUILDING.has(events[end]!.type)) end++;
  if (end >= events.length) throw new StepNotFoundError(turn, step);
  const before = events.slice(0, end);
  let header: StepContext['header'] = null;
  let route: StepContext['route'] = null;
  for (const e of before) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'request/header') header = { seq: e.seq, reason: e.data.reason, header: e.data.header };
    else if (e.type === 'request/context') route = { seq: e.seq, ...e.data };
  }
  let attempts = 1;
  let usage: Usage | null = null;
  const inStep: LogEvent[] = [];
  for (let i = start + 1; i < events.length; i++) {
    const e = events[i]!;
    if (!isKnownEvent(e)) continue;
    if (e.type === 'step/end' || e.type === 'turn/end' || e.type === 'step/start') break;
    inStep.push(e);
    if (e.type === 'request/error') attempts++;
    else if (e.type === 'assistant/message' && e.data.usage !== undefined) usage = e.data.usage;
  }
  const entered = inStep.filter((e) => e.type === 'user/message');
  const { fates } = messageFates(events);
  return {
    turn,
    step,
    startSeq: events[start]!.seq,
    requestSeq: events[end]!.seq,
    messages: deriveModelMessages(before),
    header,
    route,
    attempts,
    usage,
    entered: entered.map((e) => {
      const id = (e.data as { id: string }).id;
      const fate = fates.get(id);
      const entry = fate?.entries.find((x) => x.kind === 'entered' && x.seq === e.seq);
      return { seq: e.seq, id, class: entry?.kind === 'entered' ? entry.class : null, source: fate?.source ?? (e.data as { source: { kind: string } }).source.kind, fate: fate?.entries ?? [] };
    }),
  };
};

/** Reads `<turn>.<step>` (both positive integers), or null. */
export const parseStepRef = (text: string): { readonly turn: number; readonly step: number } | null => {
  const m = /^([1-9]\d*)\.([1-9]\d*)$/.exec(text);
  return m ? { turn: Number(m[1]), step: Number(m[2]) } : null;
};
