import type Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, Usage } from '../../../domain/events.js';
import type { ModelMessage } from '../../../domain/model-messages.js';
import { ModelError } from '../../../runtime/errors.js';
import type { FinishReason, ModelFailure, ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';
import { loadModelDriver, MODEL_DRIVER_PACKAGES } from '../model-driver.js';
import { httpFailure, requestIdOf } from '../openai/http-failure.js';

/** How {@link openAnthropicModel} builds its client. */
export interface AnthropicModelOptions {
  readonly model: string;
  /** The Messages API's base URL. @defaultValue the SDK's (`ANTHROPIC_BASE_URL`, else https://api.anthropic.com) */
  readonly baseUrl?: string;
  /** The API key. @defaultValue the SDK's (`ANTHROPIC_API_KEY`) */
  readonly apiKey?: string;
  /** `max_tokens` of each request (the Messages API requires one). @defaultValue 8192 */
  readonly maxTokens?: number;
  /** Epoch ms, to turn a `Retry-After` HTTP date into a wait. @defaultValue Date.now */
  readonly now?: () => number;
}

type MessageParam = Anthropic.MessageParam;
type ContentBlockParam = Anthropic.ContentBlockParam;

/**
 * The log's surface messages as Messages API messages. Reasoning goes back as the API requires it, in its place: a
 * signed reasoning block as `thinking` with its signature, a redacted one as `redacted_thinking` with its data;
 * reasoning without either (from another provider, or streamed before a cut) is not sent (the API refuses an unsigned
 * thinking block). Consecutive tool results share one user message.
 */
export const toAnthropicMessages = (messages: readonly ModelMessage[]): MessageParam[] => {
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]): void => {
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) (last.content as ContentBlockParam[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        push(
          'user',
          m.content.map((b): ContentBlockParam =>
            b.type === 'text'
              ? { type: 'text', text: b.text }
              : { type: 'image', source: { type: 'base64', media_type: b.mediaType as 'image/png', data: b.data } },
          ),
        );
        break;
      case 'assistant': {
        const blocks: ContentBlockParam[] = [];
        for (const b of m.content) {
          if (b.type === 'text' && b.text) blocks.push({ type: 'text', text: b.text });
          else if (b.type === 'reasoning' && b.redacted) blocks.push({ type: 'redacted_thinking', data: b.redacted });
          else if (b.type === 'reasoning' && b.signature) blocks.push({ type: 'thinking', thinking: b.text, signature: b.signature });
          else if (b.type === 'tool-call') blocks.push({ type: 'tool_use', id: b.callId, name: b.name, input: parseInput(b.arguments) });
        }
        if (blocks.length) push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: m.callId, content: m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') }]);
        break;
    }
  }
  return out;
};

const parseInput = (args: string): Record<string, unknown> => {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { arguments: args };
  }
};

/**
 * The Messages API's `stop_reason` as the port's finish reason: `tool_use` → tool-calls; `max_tokens` and
 * `model_context_window_exceeded` → max-tokens; `end_turn`, `stop_sequence`, `pause_turn` and `refusal` (the model's
 * answer is final) → stop.
 */
export const anthropicFinish = (reason: string | null | undefined): FinishReason => {
  if (reason === 'tool_use') return 'tool-calls';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'max-tokens';
  return 'stop';
};

/** The HTTP status the Messages API gives each error type: an `error` event mid-stream carries only its type. */
const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The SDK's error as the port's failure: an HTTP refusal as the hand-written OpenAI client maps it, a connection failure `NETWORK`. */
export const anthropicFailure = (e: unknown, now: number): ModelFailure => {
  const err = e as { status?: unknown; headers?: unknown; error?: unknown; message?: unknown; requestID?: unknown; name?: unknown };
  const headers = err.headers instanceof Headers ? err.headers : new Headers();
  if (typeof err.status === 'number') return httpFailure(err.status, headers, JSON.stringify(err.error ?? null), now);
  const body = err.error as { error?: { type?: unknown; message?: unknown } } | undefined;
  const type = typeof body?.error?.type === 'string' ? body.error.type : undefined;
  if (type !== undefined) {
    // an `event: error` in the stream: the status its type stands for, so an overloaded or rate-limited stream is retried
    const status = STATUS_OF_ERROR_TYPE[type];
    const requestId = requestIdOf(headers);
    return {
      message: typeof body?.error?.message === 'string' ? body.error.message : `the model streamed ${type}`,
      code: type,
      ...(status !== undefined ? { status } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
    };
  }
  return { message: `request to the model failed: ${typeof err.message === 'string' ? err.message : String(e)}`, code: 'NETWORK' };
};

/** The part of the SDK client this adapter calls. */
export type AnthropicClient = Pick<Anthropic, 'messages'>;

/**
 * A ModelPort over the official Anthropic SDK's Messages API with `stream: true`: text and thinking deltas are
 * streamed as chunks, a thinking block's signature and a `redacted_thinking` block's data are kept on its reasoning
 * block (and sent back by {@link toAnthropicMessages}), tool calls assembled from `input_json_delta`s, usage kept (input = uncached + cache reads +
 * cache writes; cached = cache reads), the request id kept on failures. The client must be built with
 * `maxRetries: 0` ({@link openAnthropicModel} does): the runtime's request-error step is the only retry, and logs each
 * attempt. A stream that breaks or ends before `message_stop` is `STREAM_CUT`.
 */
export class AnthropicMessagesModel implements ModelPort {
  readonly provider = 'anthropic';
  readonly model: string;
  readonly #client: AnthropicClient;
  readonly #maxTokens: number;
  readonly #now: () => number;

  constructor(client: AnthropicClient, options: Pick<AnthropicModelOptions, 'model' | 'maxTokens' | 'now'>) {
    this.#client = client;
    this.model = options.model;
    this.#maxTokens = options.maxTokens ?? 8192;
    this.#now = options.now ?? Date.now;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    let requestId: string | undefined;
    const fail = (e: unknown): never => {
      if (request.signal.aborted) throw e;
      const failure = anthropicFailure(e, this.#now());
      throw new ModelError(failure.requestId === undefined && requestId !== undefined ? { ...failure, requestId } : failure);
    };
    let stream: AsyncIterable<Anthropic.RawMessageStreamEvent>;
    try {
      const { data, response } = await this.#client.messages
        .create(
          {
            model: this.model,
            max_tokens: this.#maxTokens,
            stream: true,
            messages: toAnthropicMessages(request.messages),
            ...(request.system !== undefined ? { system: request.system } : {}),
            ...(request.tools.length
              ? { tools: request.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: { type: 'object' as const } })) }
              : {}),
          },
          { signal: request.signal },
        )
        .withResponse();
      requestId = requestIdOf(response.headers);
      stream = data;
    } catch (e) {
      return fail(e);
    }
    const content: AssistantBlock[] = [];
    const blocks = new Map<number, { kind: 'text' | 'reasoning' | 'redacted' | 'tool'; text: string; id?: string; name?: string; signature?: string }>();
    let stopReason: string | null = null;
    let stopped = false;
    let input = 0;
    let cacheRead: number | undefined;
    let output = 0;
    let sawUsage = false;
    try {
      for await (const ev of stream) {
        switch (ev.type) {
          case 'message_start': {
            const u = ev.message.usage;
            input = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
            if (typeof u.cache_read_input_tokens === 'number') cacheRead = u.cache_read_input_tokens;
            output = u.output_tokens;
            sawUsage = true;
            break;
          }
          case 'content_block_start': {
            const b = ev.content_block;
            if (b.type === 'text') blocks.set(ev.index, { kind: 'text', text: b.text });
            else if (b.type === 'thinking') blocks.set(ev.index, { kind: 'reasoning', text: b.thinking, ...(b.signature ? { signature: b.signature } : {}) });
            else if (b.type === 'redacted_thinking') blocks.set(ev.index, { kind: 'redacted', text: b.data });
            else if (b.type === 'tool_use') blocks.set(ev.index, { kind: 'tool', text: '', id: b.id, name: b.name });
            const started = blocks.get(ev.index);
            if (started && (started.kind === 'text' || started.kind === 'reasoning') && started.text) request.onChunk({ type: started.kind, text: started.text });
            break;
          }
          case 'content_block_delta': {
            const b = blocks.get(ev.index);
            const d = ev.delta;
            if (!b) break;
            if (d.type === 'text_delta') {
              b.text += d.text;
              request.onChunk({ type: 'text', text: d.text });
            } else if (d.type === 'thinking_delta') {
              b.text += d.thinking;
              request.onChunk({ type: 'reasoning', text: d.thinking });
            } else if (d.type === 'signature_delta') b.signature = (b.signature ?? '') + d.signature;
            else if (d.type === 'input_json_delta') b.text += d.partial_json;
            break;
          }
          case 'content_block_stop': {
            const b = blocks.get(ev.index);
            if (!b) break;
            if (b.kind === 'tool') content.push({ type: 'tool-call', callId: b.id ?? `call-${ev.index}`, name: b.name ?? '', arguments: b.text || '{}' });
            else if (b.kind === 'redacted') content.push({ type: 'reasoning', text: '', redacted: b.text });
            else if (b.kind === 'reasoning' && (b.text || b.signature)) content.push({ type: 'reasoning', text: b.text, ...(b.signature ? { signature: b.signature } : {}) });
            else if (b.kind === 'text' && b.text) content.push({ type: 'text', text: b.text });
            break;
          }
          case 'message_delta':
            if (ev.delta.stop_reason) stopReason = ev.delta.stop_reason;
            output = ev.usage.output_tokens;
            if (typeof ev.usage.input_tokens === 'number') {
              input = ev.usage.input_tokens + (ev.usage.cache_read_input_tokens ?? cacheRead ?? 0) + (ev.usage.cache_creation_input_tokens ?? 0);
              if (typeof ev.usage.cache_read_input_tokens === 'number') cacheRead = ev.usage.cache_read_input_tokens;
            }
            sawUsage = true;
            break;
          case 'message_stop':
            stopped = true;
            break;
        }
      }
    } catch (e) {
      if (request.signal.aborted) throw e;
      const err = e as { status?: unknown; error?: unknown };
      // an `event: error` (it carries the error's body) is the provider's answer; anything else broke the connection
      if (err.status === undefined && (err.error as { error?: unknown } | undefined)?.error === undefined) {
        throw new ModelError({ message: `the model's stream was cut: ${e instanceof Error ? e.message : String(e)}`, code: 'STREAM_CUT', ...(requestId !== undefined ? { requestId } : {}) });
      }
      return fail(e);
    }
    if (!stopped) throw new ModelError({ message: "the model's stream ended before the answer did", code: 'STREAM_CUT', ...(requestId !== undefined ? { requestId } : {}) });
    const usage: Usage | undefined = sawUsage ? { inputTokens: input, outputTokens: output, ...(cacheRead !== undefined ? { cachedInputTokens: cacheRead } : {}) } : undefined;
    return { content, finishReason: anthropicFinish(stopReason), ...(usage ? { usage } : {}) };
  }
}

/**
 * An {@link AnthropicMessagesModel} on the official SDK, loaded now: rejects with a `ModelDriverMissingError` when
 * `@anthropic-ai/sdk` is not installed. The SDK's own retries are off (`maxRetries: 0`).
 */
export const openAnthropicModel = async (options: AnthropicModelOptions): Promise<AnthropicMessagesModel> => {
  const sdk = await loadModelDriver<{ default: typeof Anthropic }>('anthropic', MODEL_DRIVER_PACKAGES.anthropic);
  const client = new sdk.default({
    maxRetries: 0,
    ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
  });
  return new AnthropicMessagesModel(client, options);
};
