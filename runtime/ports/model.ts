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
  /** Streaming: call with each visible text chunk as it arrives (optional; logged as assistant/chunk). */
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
