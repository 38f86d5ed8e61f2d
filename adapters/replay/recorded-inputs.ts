import type { EventMetadata } from '../../domain/event-metadata.js';
import { isKnownEvent, type InboxSplicedData, type InboxTarget, type LogEvent } from '../../domain/events.js';
import type { UserMessage } from '../../domain/message.js';
import { isHookActor } from '../../runtime/hooks.js';

/**
 * The inputs of a recorded session as a counterfactual replay re-admits them: every splice that came from outside
 * the runtime (sends, queue edits, cancels; not the runtime's claims nor the contexts its tools staged), each with
 * the point of the turn structure it arrived at — between turns, at a turn's start, during a step's request, or
 * during its tool round — and what was pending at the fork point.
 */

/** A point of the turn structure: turn, step (0 at the turn's start, +∞ after its end) and phase. */
export interface TurnPoint {
  readonly turn: number;
  readonly step: number;
  /** 0 the turn's start, 1 a step's request, 2 its tool round, 3 after the turn. */
  readonly phase: 0 | 1 | 2 | 3;
}

/** Orders two points: negative when `a` comes first. */
export const comparePoints = (a: TurnPoint, b: TurnPoint): number => a.turn - b.turn || a.step - b.step || a.phase - b.phase;

/** A recorded input and where it arrived. */
export interface RecordedInput {
  readonly seq: number;
  readonly at: TurnPoint;
  readonly splice: InboxSplicedData;
  readonly metadata: EventMetadata | undefined;
  /** The ids the splice removed from the recorded inbox (a cancel, a replace). */
  readonly removedIds: readonly string[];
  /** The splice appended at the end of its list (a send): re-admitted as a send wherever that list now ends. */
  readonly appends: boolean;
}

/** What was pending at the boundary (re-admitted first, in order), and every input after it. */
export interface RecordedInputs {
  readonly pending: readonly { readonly target: InboxTarget; readonly message: UserMessage; readonly metadata: EventMetadata | undefined }[];
  readonly inputs: readonly RecordedInput[];
}

const isClaim = (d: InboxSplicedData): boolean => d.removedCount !== undefined && d.outcome === undefined && d.inserted.length === 0;

/** Options of {@link recordedInputs}. */
export interface RecordedInputsOptions {
  /**
   * Are the inputs a hook sent after the boundary (actor `hook:<name>`) among them? Not when the deployment's hooks
   * run in the replay: they send their own. What was pending at the boundary is kept either way. @defaultValue true
   */
  readonly hookInputs?: boolean;
}

/** Reads the inputs of `events` after `boundary` (a number of events), and the inbox pending at it. */
export const recordedInputs = (events: readonly LogEvent[], boundary: number, options: RecordedInputsOptions = {}): RecordedInputs => {
  const hookInputs = options.hookInputs ?? true;
  type Item = { readonly message: UserMessage; readonly metadata: EventMetadata | undefined };
  const lists: Record<InboxTarget, Item[]> = { 'next-turn': [], 'next-step': [] };
  const inputs: RecordedInput[] = [];
  let at: TurnPoint = { turn: 0, step: Number.POSITIVE_INFINITY, phase: 3 };
  let pending: RecordedInputs['pending'] = [];
  for (const e of events) {
    if (e.seq === boundary) pending = (['next-step', 'next-turn'] as const).flatMap((target) => lists[target].map((i) => ({ target, ...i })));
    if (!isKnownEvent(e)) continue;
    switch (e.type) {
      case 'turn/start':
        at = { turn: e.data.turn, step: 0, phase: 0 };
        break;
      case 'step/start':
        at = { turn: e.data.turn, step: e.data.step, phase: 1 };
        break;
      case 'assistant/message':
        at = { turn: e.data.turn, step: e.data.step, phase: 2 };
        break;
      case 'turn/end':
        at = { turn: e.data.turn, step: Number.POSITIVE_INFINITY, phase: 3 };
        break;
      case 'agent/inbox/spliced': {
        const list = lists[e.data.target];
        const appends = e.data.removedCount === undefined && e.data.start === list.length;
        const removed = list.splice(e.data.start, e.data.removedCount ?? 0, ...e.data.inserted.map((message) => ({ message, metadata: e.metadata })));
        const staged = e.metadata?.actor?.startsWith('tool:') === true;
        const hooks = !hookInputs && isHookActor(e.metadata?.actor);
        if (e.seq >= boundary && !isClaim(e.data) && !staged && !hooks) {
          inputs.push({ seq: e.seq, at, splice: e.data, metadata: e.metadata, removedIds: removed.map((r) => r.message.id), appends });
        }
        break;
      }
      default:
        break;
    }
  }
  if (boundary >= events.length) pending = (['next-step', 'next-turn'] as const).flatMap((target) => lists[target].map((i) => ({ target, ...i })));
  return { pending, inputs };
};
