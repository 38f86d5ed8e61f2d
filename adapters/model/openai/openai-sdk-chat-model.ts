import type OpenAI from 'openai';
import { ModelError } from '../../../runtime/errors.js';
import type { ModelFailure, ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';
import { loadModelDriver, MODEL_DRIVER_PACKAGES } from '../model-driver.js';
import { chatAnswer } from './chat-answer.js';
import { usageOf } from './chat-deltas.js';
import { httpFailure, requestIdOf } from './http-failure.js';
import { toWireMessages } from './openai-chat-model.js';

/** How {@link openOpenAiSdkModel} builds its client. */
export interface OpenAiSdkModelOptions {
  readonly model: string;
  /** e.g. https://api.openai.com/v1 or any compatible server. @defaultValue the SDK's (`OPENAI_BASE_URL`, else https://api.openai.com/v1) */
  readonly baseUrl?: string;
  /** The API key, sent as `Authorization: Bearer …`. @defaultValue the SDK's (`OPENAI_API_KEY`) */
  readonly apiKey?: string;
  /** Epoch ms, to turn a `Retry-After` HTTP date into a wait. @defaultValue Date.now */
  readonly now?: () => number;
}

/** The SDK's error as the port's failure: an HTTP refusal as the hand-written client maps it, a connection failure `NETWORK`. */
export const openAiSdkFailure = (e: unknown, now: number): ModelFailure => {
  const err = e as { status?: unknown; headers?: unknown; error?: unknown; message?: unknown };
  const headers = err.headers instanceof Headers ? err.headers : new Headers();
  // the SDK keeps the body's `error` object; http-failure reads it from the body as the server sent it
  if (typeof err.status === 'number') return httpFailure(err.status, headers, JSON.stringify({ error: err.error ?? null }), now);
  return { message: `request to the model failed: ${typeof err.message === 'string' ? err.message : String(e)}`, code: 'NETWORK' };
};

/** The part of the SDK client this adapter calls. */
export type OpenAiClient = Pick<OpenAI, 'chat'>;

type Delta = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };

/**
 * A ModelPort over the official OpenAI SDK's chat completions with `stream: true` — OpenAI, and compatible servers
 * (DeepSeek, vLLM, Ollama, …): text deltas and reasoning deltas (`reasoning_content` as DeepSeek sends it, or
 * `reasoning`) streamed as chunks, tool calls assembled from their deltas, usage with cached input tokens, the request
 * id kept. Its messages, tools and finish reasons are the hand-written client's. The client must be built with
 * `maxRetries: 0` ({@link openOpenAiSdkModel} does): the runtime's request-error step is the only retry. A stream that
 * breaks, or ends before a finish reason, is `STREAM_CUT`; an error the server streams keeps its code.
 */
export class OpenAiSdkChatModel implements ModelPort {
  readonly provider = 'openai';
  readonly model: string;
  readonly #client: OpenAiClient;
  readonly #now: () => number;

  constructor(client: OpenAiClient, options: Pick<OpenAiSdkModelOptions, 'model' | 'now'>) {
    this.#client = client;
    this.model = options.model;
    this.#now = options.now ?? Date.now;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    let requestId: string | undefined;
    const withId = (f: ModelFailure): ModelFailure => (f.requestId === undefined && requestId !== undefined ? { ...f, requestId } : f);
    let stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
    try {
      const { data, response } = await this.#client.chat.completions
        .create(
          {
            model: this.model,
            stream: true,
            stream_options: { include_usage: true },
            messages: toWireMessages(request.system, request.messages) as unknown as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
            ...(request.tools.length
              ? { tools: request.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: { type: 'object' } } })) }
              : {}),
          },
          { signal: request.signal },
        )
        .withResponse();
      requestId = requestIdOf(response.headers);
      stream = data;
    } catch (e) {
      if (request.signal.aborted) throw e;
      throw new ModelError(openAiSdkFailure(e, this.#now()));
    }
    const answer = chatAnswer(request);
    try {
      for await (const chunk of stream) {
        if (chunk.usage) {
          answer.usage(usageOf(chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.prompt_tokens_details));
        }
        const choice = chunk.choices[0];
        if (!choice) continue;
        answer.choice((choice.delta ?? {}) as Delta, choice.finish_reason);
      }
    } catch (e) {
      if (request.signal.aborted) throw e;
      const streamed = (e as { error?: unknown }).error;
      if (typeof streamed === 'object' && streamed !== null) {
        // the server streamed `{error: {…}}`: its answer, with its code
        const { message, code } = streamed as { message?: unknown; code?: unknown };
        throw new ModelError(withId({ message: typeof message === 'string' ? message : 'the model streamed an error', code: typeof code === 'string' && code ? code : 'STREAM_ERROR' }));
      }
      throw new ModelError(withId({ message: `the model's stream was cut: ${e instanceof Error ? e.message : String(e)}`, code: 'STREAM_CUT' }));
    }
    const end = answer.end();
    if (end.kind === 'cut') throw new ModelError(withId(end.failure));
    return end.response;
  }
}

/**
 * An {@link OpenAiSdkChatModel} on the official SDK, loaded now: rejects with a `ModelDriverMissingError` when
 * `openai` is not installed. The SDK's own retries are off (`maxRetries: 0`).
 */
export const openOpenAiSdkModel = async (options: OpenAiSdkModelOptions): Promise<OpenAiSdkChatModel> => {
  const sdk = await loadModelDriver<{ default: typeof OpenAI }>('openai', MODEL_DRIVER_PACKAGES.openai);
  const client = new sdk.default({
    maxRetries: 0,
    ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {}),
    // the SDK refuses to start without a key; a local server (vLLM, Ollama) usually needs none
    apiKey: options.apiKey ?? process.env['OPENAI_API_KEY'] ?? 'none',
  });
  return new OpenAiSdkChatModel(client, options);
};
