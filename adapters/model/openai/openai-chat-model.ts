import type { AssistantBlock, Usage } from '../../../domain/events.js';
import type { ModelMessage } from '../../../domain/model-messages.js';
import { ModelError } from '../../../runtime/errors.js';
import type { FinishReason, ModelFailure, ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';
import { addToolCallDeltas, toolCallBlocks, usageOf, type PartialToolCall } from './chat-deltas.js';
import { httpFailure, requestIdOf } from './http-failure.js';
import { readSseData } from './sse-lines.js';

export interface OpenAiChatModelOptions {
  readonly model: string;
  /** e.g. https://api.openai.com/v1 or any compatible server. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …` when set. */
  readonly apiKey?: string;
  /** @defaultValue globalThis.fetch */
  readonly fetch?: typeof globalThis.fetch;
  /** Epoch ms, to turn a `Retry-After` HTTP date into a wait. @defaultValue Date.now */
  readonly now?: () => number;
}

type WireMessage = Record<string, unknown>;

/** The log's surface messages as chat-completions messages. */
export const toWireMessages = (system: string | undefined, messages: readonly ModelMessage[]): WireMessage[] => {
  const out: WireMessage[] = system !== undefined ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        out.push({
          role: 'user',
          content: m.content.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'image_url', image_url: { url: `data:${b.mediaType};base64,${b.data}` } })),
        });
        break;
      case 'assistant': {
        const text = m.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('');
        const calls = m.content.filter((b): b is Extract<AssistantBlock, { type: 'tool-call' }> => b.type === 'tool-call');
        out.push({
          role: 'assistant',
          content: text || null,
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
        });
        break;
      }
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.callId, content: m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') });
        break;
    }
  }
  return out;
};

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

/**
 * A ModelPort for OpenAI-compatible `POST {baseUrl}/chat/completions` with `stream: true`: text and reasoning deltas
 * (`reasoning_content`, `reasoning`) are streamed as chunks, tool calls are assembled from their deltas, the request is aborted when the turn is canceled, usage
 * (with cached input tokens) is kept. A failure becomes a `ModelError` with the facts the retry policy reads: an
 * HTTP refusal its status, code, request id and `Retry-After`; a connection failure `NETWORK`; a stream that breaks
 * or ends before its finish `STREAM_CUT`. The client never retries by itself: the runtime's request-error step does,
 * and logs each attempt.
 */
export class OpenAiChatModel implements ModelPort {
  readonly provider = 'openai';
  readonly model: string;
  readonly #opts: OpenAiChatModelOptions;

  constructor(options: OpenAiChatModelOptions) {
    this.#opts = options;
    this.model = options.model;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const fetchFn = this.#opts.fetch ?? globalThis.fetch;
    let res: Response;
    try {
      res = await fetchFn(`${this.#opts.baseUrl.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.#opts.apiKey ? { authorization: `Bearer ${this.#opts.apiKey}` } : {}) },
        body: JSON.stringify({
          model: this.model,
          stream: true,
          stream_options: { include_usage: true },
          messages: toWireMessages(request.system, request.messages),
          ...(request.tools.length
            ? { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: { type: 'object' } } })) }
            : {}),
        }),
        signal: request.signal,
      });
    } catch (e) {
      if (request.signal.aborted) throw e;
      throw new ModelError({ message: `request to the model failed: ${e instanceof Error ? e.message : String(e)}`, code: 'NETWORK' });
    }
    const now = this.#opts.now ?? Date.now;
    if (!res.ok || !res.body) {
      const body = await res.text().catch(() => '');
      throw new ModelError(httpFailure(res.status, res.headers, body, now()));
    }
    const requestId = requestIdOf(res.headers);
    const fail = (message: string, code: string): ModelError => new ModelError({ message, code, ...(requestId !== undefined ? { requestId } : {}) });
    let text = '';
    let reasoning = '';
    const content: AssistantBlock[] = [];
    let finish: string | null = null;
    let done = false;
    let usage: Usage | undefined;
    const calls: PartialToolCall[] = [];
    const stream = readSseData(res.body)[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<string>;
      try {
        next = await stream.next();
      } catch (e) {
        if (request.signal.aborted) throw e;
        // the connection dropped mid-answer: a retryable cut, not a malformed answer
        throw fail(`the model's stream was cut: ${e instanceof Error ? e.message : String(e)}`, 'STREAM_CUT');
      }
      if (next.done) break;
      const data = next.value;
      if (data === '[DONE]') {
        done = true;
        break;
      }
      let chunk: {
        choices?: { delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null; tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: string | null }[];
        usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
        error?: { message?: string; code?: string };
      };
      try {
        chunk = JSON.parse(data);
      } catch {
        throw fail('the model streamed a chunk that is not JSON', 'BAD_STREAM');
      }
      if (chunk.error) throw fail(chunk.error.message ?? 'the model streamed an error', chunk.error.code ?? 'STREAM_ERROR');
      if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number' && typeof chunk.usage.completion_tokens === 'number') {
        usage = usageOf(chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.prompt_tokens_details);
      }
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta ?? {};
      // reasoning: DeepSeek's reasoning_content, vLLM's and Ollama's reasoning; it comes before the text
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
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    // neither [DONE] nor a finish reason: the body ended early (a proxy or the server dropped it)
    if (!done && finish === null) throw fail('the model\'s stream ended before the answer did', 'STREAM_CUT');
    const cut = providerCutOf(finish);
    if (cut !== null) throw fail(cut.message, cut.code);
    if (reasoning) content.push({ type: 'reasoning', text: reasoning });
    if (text) content.push({ type: 'text', text });
    content.push(...toolCallBlocks(calls));
    return { content, finishReason: finishOf(finish, calls.length > 0), ...(usage ? { usage } : {}) };
  }
}
