import type { AssistantBlock, Usage } from '../../domain/events.js';
import type { ModelMessage } from '../../domain/model-messages.js';

/** A tool as the model is told about it. */
export interface ToolSpec {
  readonly name: string;
  readonly description?: string;
}

/** What the driver asks the model for one step. */
export interface ModelRequest {
  readonly system?: string;
  /** Every surface message of the log, in log order (user, assistant and tool-result messages). */
  readonly messages: readonly ModelMessage[];
  readonly turn: number;
  readonly step: number;
  readonly tools: readonly ToolSpec[];
  /** Aborted when the turn is canceled; a model should stop and reject (or return what it has). */
  readonly signal: AbortSignal;
  /**
   * Streaming (optional): call with each delta as it arrives — `text` for visible text, `reasoning` for reasoning —
   * each logged as an assistant/chunk. If the turn is aborted mid-stream, the blocks these deltas assembled (text and
   * reasoning, in order; a change of kind starts a new block) are kept as an interrupted assistant message.
   */
  readonly onChunk: (chunk: { readonly type: 'text' | 'reasoning'; readonly text: string }) => void;
}

/** Why the model stopped a step: it finished, it asked for tools, or it hit its token limit. */
export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'error';

/** The model's answer: content blocks (text, reasoning, tool calls in model order) and why it stopped. */
export interface ModelResponse {
  readonly content: readonly AssistantBlock[];
  readonly finishReason: FinishReason;
  readonly usage?: Usage;
  /** For finishReason 'error': what failed. */
  readonly error?: { readonly message: string; readonly code: string; readonly status?: number };
}

/** The model port: one request per step. Throwing or finishing with 'error' ends the turn with `error`. */
export interface ModelPort {
  readonly provider?: string;
  readonly model?: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
