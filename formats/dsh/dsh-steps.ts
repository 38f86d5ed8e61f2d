import type { RawEnvelope } from '../../runtime/ports/recorded-envelope.js';
import { DshLogError } from './dsh-errors.js';
import { DSH_IGNORED_PREFIX } from './dsh-map.js';
import { isJsonObject } from '../../domain/json.js';

/**
 * What the harness's request and stream events say about its steps, as far as its format describes them:
 *
 * - `request/header {header: {config, …}, reason: initial | resume | change}`: a request's configuration, written
 *   before a step's request when it is the loop's first or when it changed;
 * - `request/context {provider, model, contextWindow?}`: the model route, written when it changed;
 * - `assistant/chunk {turn, step, chunk}`: one streamed piece of a step's answer; the format does not describe the
 *   chunk itself, so it is not reassembled — the answer is the `assistant/message` the step committed, which cites
 *   the chunks it was assembled from in `sourceEventSeqs` (a `tool/result` cites its `tool/call`).
 *
 * The tracker checks those shapes and citations (a refusal is `dsh-malformed-envelope`) and records each step: the
 * route in effect, its request headers, how many chunks it streamed, and the answers it committed.
 */

/** A model route as `request/context` gives it; `seq` is the report's seq of that event. */
export interface DshRoute {
  readonly seq: number;
  readonly provider: string;
  readonly model: string;
  readonly contextWindow: number | null;
}

/** One assistant message a step committed (report seq), its text blocks joined, and the chunks it cites. */
export interface DshAnswer {
  readonly seq: number;
  /** The message's own id (the harness gives every message one); null when the log gave none. */
  readonly messageId: string | null;
  readonly text: string;
  /** The call ids of its tool-call blocks. */
  readonly toolCalls: readonly string[];
  readonly interrupted: boolean;
  /** How many of the step's chunks it cites (its `sourceEventSeqs`). */
  readonly cited: number;
}

/** One step as the request and stream events tell it. Seqs are the report's (harness seq + 1). */
export interface DshStep {
  readonly turn: number;
  readonly step: number;
  readonly startSeq: number;
  /** Its step/end; null when the log (or what was read of it) ends inside the step. */
  readonly endSeq: number | null;
  /** Is its end one the reader synthesized (the log ends inside the step: see dsh-crash.ts)? */
  readonly synthesizedEnd: boolean;
  /** The ids of the inputs that entered the model in it (its user/messages). */
  readonly entered: readonly string[];
  /** The route in effect at its end: the latest request/context read by then (null: none yet). */
  readonly route: DshRoute | null;
  readonly requests: readonly { readonly seq: number; readonly reason: 'initial' | 'resume' | 'change' }[];
  /** Its assistant/chunk events. */
  readonly chunks: number;
  readonly answers: readonly DshAnswer[];
}

type Obj = Record<string, unknown>;
const isPositive = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const REASONS = new Set(['initial', 'resume', 'change']);

/** What one event changed that a summary counts once the event is taken: a step closed, a route read. */
export interface DshStepEffects {
  readonly closed: DshStep | null;
  readonly route: DshRoute | null;
}
const NONE: DshStepEffects = { closed: null, route: null };

/** Tracks the open step across mapped envelopes, in order; `sources` is the event's `sourceEventSeqs` (harness seqs). */
export const createStepTracker = () => {
  let route: DshRoute | null = null;
  let open: { turn: number; step: number; startSeq: number; entered: string[]; requests: DshStep['requests'][number][]; answers: DshAnswer[] } | null = null;
  // this step's chunks (harness seq → "turn/step") and tool calls (call id → harness seq): what its events may cite
  let chunkSteps = new Map<number, string>();
  let calls = new Map<string, number>();
  const close = (endSeq: number | null, synthesizedEnd = false): DshStep | null => {
    if (open === null) return null;
    const s: DshStep = { ...open, endSeq, synthesizedEnd, route, chunks: [...chunkSteps.values()].filter((k) => k === `${open!.turn}/${open!.step}`).length };
    open = null;
    return s;
  };
  return {
    /** Checks one event (refusing with its line; `synthesized`: a closer the reader made) and returns what it changed. */
    push(envelope: RawEnvelope, sources: readonly number[] | null, line: number, synthesized = false): DshStepEffects {
      const harnessSeq = envelope.seq - 1;
      const refuse = (reason: string): never => {
        throw new DshLogError('dsh-malformed-envelope', { line, seq: harnessSeq, byteOffset: null }, reason);
      };
      const data = envelope.data as Obj;
      switch (envelope.type) {
        case 'step/start': {
          const closed = close(null);
          open = { turn: data.turn as number, step: data.step as number, startSeq: envelope.seq, entered: [], requests: [], answers: [] };
          chunkSteps = new Map();
          calls = new Map();
          return { closed, route: null };
        }
        case 'step/end':
        case 'turn/end':
          return { closed: close(envelope.type === 'step/end' ? envelope.seq : null, synthesized), route: null };
        case 'user/message':
          open?.entered.push(data.id as string);
          return NONE;
        case 'tool/call':
          calls.set(data.callId as string, harnessSeq);
          return NONE;
        case 'tool/result':
          for (const s of sources ?? []) if (calls.get((data.message as Obj).callId as string) !== s) refuse(`tool/result: sourceEventSeqs cites harness seq ${s}, which is not this call's tool/call`);
          return NONE;
        case 'assistant/message': {
          const key = `${data.turn as number}/${data.step as number}`;
          for (const s of sources ?? []) if (chunkSteps.get(s) !== key) refuse(`assistant/message: sourceEventSeqs cites harness seq ${s}, which is not an assistant/chunk of turn ${data.turn as number} step ${data.step as number}`);
          const message = data.message as { content: Obj[]; id?: string };
          const content = message.content;
          open?.answers.push({
            seq: envelope.seq,
            messageId: message.id ?? null,
            text: content.filter((b) => b.type === 'text').map((b) => b.text as string).join(''),
            toolCalls: content.filter((b) => b.type === 'tool-call').map((b) => b.callId as string),
            interrupted: data.interrupted === true,
            cited: sources?.length ?? 0,
          });
          return NONE;
        }
        case `${DSH_IGNORED_PREFIX}assistant/chunk`:
          if (!isJsonObject(data) || !isPositive(data.turn) || !isPositive(data.step) || !('chunk' in data)) refuse('assistant/chunk: data is {turn, step, chunk}');
          chunkSteps.set(harnessSeq, `${data.turn as number}/${data.step as number}`);
          return NONE;
        case 'request/header':
          if (!isJsonObject(data) || !isJsonObject(data.header) || !REASONS.has(data.reason as string)) refuse('request/header: data is {header: {config, …}, reason: initial, resume or change}');
          open?.requests.push({ seq: envelope.seq, reason: data.reason as 'initial' | 'resume' | 'change' });
          return NONE;
        case 'request/context': {
          const { provider, model, contextWindow } = isJsonObject(data) ? data : {};
          if (typeof provider !== 'string' || typeof model !== 'string' || !(contextWindow === undefined || isPositive(contextWindow))) {
            refuse('request/context: data is {provider, model, contextWindow?} (strings, and a positive integer)');
          }
          route = { seq: envelope.seq, provider: provider as string, model: model as string, contextWindow: (contextWindow as number | undefined) ?? null };
          return { closed: null, route };
        }
        default:
          return NONE;
      }
    },
    /** The step still open when the log ends (its endSeq null), if any. */
    finish: (): DshStep | null => close(null),
  };
};
