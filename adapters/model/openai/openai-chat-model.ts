import type { AssistantBlock } from '../../../domain/events.js';
import type { ModelMessage } from '../../../domain/model-messages.js';
import { ModelError } from '../../../runtime/errors.js';
import type { ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';

export { finishOf, providerCutOf } from './chat-answer.js';
import { chatAnswer } from './chat-answer.js';
import { usageOf } from './chat-deltas.js';
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
    const answer = chatAnswer(request);
    let done = false;
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
        answer.usage(usageOf(chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.prompt_tokens_details));
      }
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      answer.choice(choice.delta ?? {}, choice.finish_reason);
    }
    // neither [DONE] nor a finish reason: the body ended early (a proxy or the server dropped it)
    const end = answer.end(done);
    if (end.kind === 'cut') throw fail(end.failure.message, end.failure.code);
    return end.response;
  }
}
