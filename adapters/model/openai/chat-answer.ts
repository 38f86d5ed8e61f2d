import type { AssistantBlock, Usage } from '../../../domain/events.js';
import type { FinishReason, ModelFailure, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';
import { addToolCallDeltas, toolCallBlocks, type PartialToolCall, type WireToolCallDelta } from './chat-deltas.js';

/**
 * A `finish_reason` that is no finish: the provider stopped the answer itself, and the attempt failed as a cut stream
 * would (`STREAM_CUT`, retried by the default policy) — DeepSeek's `insufficient_system_resource` (its inference
 * system ran out of resources mid-answer). Null for any other reason.
 */
export const providerCutOf = (reason: string | null | undefined): ModelFailure | null =>
  reason === 'insufficient_system_resource' ? { message: `the model's answer was cut by the provider (finish_reason ${reason})`, code: 'STREAM_CUT' } : null;

/**
 * The chat-completions `finish_reason` as the port's finish reason: `length` → max-tokens, `tool_calls` (or any tool
 * call) → tool-calls, else (`stop`, `content_filter`: the answer is final) stop. See {@link providerCutOf} first.
 */
export const finishOf = (reason: string | null | undefined, hasCalls: boolean): FinishReason => {
  if (reason === 'length') return 'max-tokens';
  if (reason === 'tool_calls' || hasCalls) return 'tool-calls';
  return 'stop';
};

/** The delta of one streamed choice, as both OpenAI-compatible clients receive it. */
export interface ChatDelta {
  readonly content?: string | null;
  /** DeepSeek's reasoning. */
  readonly reasoning_content?: string | null;
  /** vLLM's and Ollama's reasoning. */
  readonly reasoning?: string | null;
  readonly tool_calls?: readonly WireToolCallDelta[] | null;
}

/** How a streamed answer ended: its response, or the failure of a stream that ended without a real finish. */
export type ChatAnswerEnd = { readonly kind: 'answer'; readonly response: ModelResponse } | { readonly kind: 'cut'; readonly failure: ModelFailure };

/** A streamed chat-completions answer being assembled chunk by chunk (see {@link chatAnswer}). */
export interface ChatAnswer {
  /** The usage a chunk reported (the last one reported wins). */
  readonly usage: (usage: Usage) => void;
  /** One chunk's first choice: its reasoning and text are streamed to the request, its tool-call deltas added. */
  readonly choice: (delta: ChatDelta, finishReason: string | null | undefined) => void;
  /** The finish reason seen so far, or null. */
  readonly finishReason: () => string | null;
  /**
   * The end of the stream: the answer, or a cut when it carried neither a finish reason nor (`sawDone`) the
   * stream's own end marker, or when its finish reason was a provider's cut.
   */
  readonly end: (sawDone?: boolean) => ChatAnswerEnd;
}

/**
 * The assembly both OpenAI-compatible clients (the fetch client and the SDK client) share: reasoning comes before
 * the text and becomes its own block; text and reasoning deltas go to `request.onChunk` as they arrive; tool calls
 * are assembled from their deltas by index.
 */
export const chatAnswer = (request: Pick<ModelRequest, 'onChunk'>): ChatAnswer => {
  let text = '';
  let reasoning = '';
  let finish: string | null = null;
  let usage: Usage | undefined;
  const calls: PartialToolCall[] = [];
  const content: AssistantBlock[] = [];
  return {
    usage: (u) => {
      usage = u;
    },
    choice: (delta, finishReason) => {
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (typeof thought === 'string' && thought) {
        reasoning += thought;
        request.onChunk({ type: 'reasoning', text: thought });
      }
      if (typeof delta.content === 'string' && delta.content) {
        if (reasoning) content.push({ type: 'reasoning', text: reasoning });
        reasoning = '';
        text += delta.content;
        request.onChunk({ type: 'text', text: delta.content });
      }
      addToolCallDeltas(calls, delta.tool_calls);
      if (finishReason) finish = finishReason;
    },
    finishReason: () => finish,
    end: (sawDone = false) => {
      if (finish === null && !sawDone) return { kind: 'cut', failure: { message: "the model's stream ended before the answer did", code: 'STREAM_CUT' } };
      const cut = providerCutOf(finish);
      if (cut !== null) return { kind: 'cut', failure: cut };
      const blocks = [...content];
      if (reasoning) blocks.push({ type: 'reasoning', text: reasoning });
      if (text) blocks.push({ type: 'text', text });
      blocks.push(...toolCallBlocks(calls));
      return { kind: 'answer', response: { content: blocks, finishReason: finishOf(finish, calls.length > 0), ...(usage ? { usage } : {}) } };
    },
  };
};
