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
  /** The attempt of this step: 1, then 2, 3, … for each retry after a failed request. */
  readonly attempt: number;
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
  /** For finishReason 'error': what failed (the provider's status, retry-after and request id when it said them). */
  readonly error?: ModelFailure;
}

/** A failed model request as the model port reports it: the facts a `turn/end error` records. */
export interface ModelFailure {
  readonly message: string;
  /** A stable code: the provider's, `HTTP_<status>`, `NETWORK` (connection failed or reset), `STREAM_CUT`, … */
  readonly code: string;
  readonly status?: number;
  /** How long the provider asked to wait before retrying (`Retry-After`), in ms. */
  readonly providerRetryAfterMs?: number;
  /** The provider's id of the request. */
  readonly requestId?: string;
}

/**
 * The model port: one request per attempt of a step. Throwing (a `ModelError` carries its {@link ModelFailure}) or
 * finishing with 'error' is a failed attempt: the `request-error` waterfall retries it or ends the turn `error`.
 */
export interface ModelPort {
  readonly provider?: string;
  readonly model?: string;
  /** The model's context window in tokens, when known: recorded in `request/context` with the route. */
  readonly contextWindow?: number;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
