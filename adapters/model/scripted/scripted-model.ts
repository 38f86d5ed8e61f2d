import type { AssistantBlock, Usage } from '../../../domain/events.js';
import { ModelError } from '../../../runtime/errors.js';
import type { FinishReason, ModelFailure, ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';

/** A scripted reply: plain text, a full response, or a function of the request (to act at an exact point). */
export type ScriptStep =
  | string
  | ScriptedResponse
  | ((request: ModelRequest, ctx: ScriptContext) => string | ScriptedResponse | Promise<string | ScriptedResponse>);

/** A streamed delta: visible text (a plain string) or reasoning. */
export type ScriptedChunk = string | { readonly type: 'text' | 'reasoning'; readonly text: string };

/** One scripted model answer: text, streamed chunks, tool calls, a finish reason, usage, or an error to throw. */
export interface ScriptedResponse {
  /** A reasoning block, placed before the text in the final message. */
  readonly reasoning?: string;
  readonly text?: string;
  readonly toolCalls?: readonly { readonly callId: string; readonly name: string; readonly arguments?: unknown }[];
  /** @defaultValue 'tool-calls' when there are tool calls, else 'stop' */
  readonly finishReason?: FinishReason;
  /**
   * A failed attempt: the chunks (if any) stream first, then the request finishes `error` with these facts. Each
   * attempt of a step takes the next scripted reply, so `[failure, failure, 'ok']` is a step that succeeds at its
   * third attempt when the retry policy (or a `request-error` listener) retries.
   */
  readonly error?: ModelFailure;
  /** Reject the request (as a cut connection would) after the chunks, instead of finishing `error`. */
  readonly throws?: ModelFailure;
  /**
   * Deltas streamed before the response resolves (each one an assistant/chunk): a string is a text delta, an object
   * may be a reasoning delta. The model stops (rejects) as soon as the request is aborted between two deltas.
   */
  readonly chunks?: readonly ScriptedChunk[];
  readonly usage?: Usage;
}

/** What a scripted step function gets besides the request: the index of the call (0-based). */
export interface ScriptContext {
  /** 0-based index of this request among all requests the model got. */
  readonly index: number;
}

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** What to answer once the script is exhausted. @defaultValue throw an error (the turn ends `error`) */
  readonly whenExhausted?: ScriptStep;
}

/**
 * A deterministic model that answers from a list of steps: text, structured responses, or functions of the request,
 * so a test can act at an exact point (inject during step 1, steer inside a tool body, fail the third request).
 * Records every request it receives.
 */
export class ScriptedModel implements ModelPort {
  readonly provider = 'scripted';
  readonly model = 'scripted-1';
  readonly requests: ModelRequest[] = [];
  readonly #steps: ScriptStep[];
  readonly #opts: ScriptedModelOptions;

  constructor(steps: readonly ScriptStep[] = [], options: ScriptedModelOptions = {}) {
    this.#steps = [...steps];
    this.#opts = options;
  }

  /** Adds steps at the end of the script. */
  push(...steps: ScriptStep[]): this {
    this.#steps.push(...steps);
    return this;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const index = this.requests.length;
    this.requests.push(request);
    const step = this.#steps.shift() ?? this.#opts.whenExhausted;
    if (step === undefined) throw new Error(`scripted model: no reply scripted for request #${index + 1}`);
    const reply = typeof step === 'function' ? await step(request, { index }) : step;
    const r: ScriptedResponse = typeof reply === 'string' ? { text: reply } : reply;
    for (const chunk of r.chunks ?? []) {
      request.onChunk(typeof chunk === 'string' ? { type: 'text', text: chunk } : { type: chunk.type, text: chunk.text });
      await Promise.resolve();
      if (request.signal.aborted) throw new Error('aborted');
    }
    if (request.signal.aborted) throw new Error('aborted');
    if (r.throws) throw new ModelError(r.throws);
    const content: AssistantBlock[] = [];
    if (r.reasoning !== undefined) content.push({ type: 'reasoning', text: r.reasoning });
    if (r.text !== undefined) content.push({ type: 'text', text: r.text });
    for (const c of r.toolCalls ?? []) {
      content.push({ type: 'tool-call', callId: c.callId, name: c.name, arguments: c.arguments === undefined ? '{}' : JSON.stringify(c.arguments) });
    }
    const finishReason = r.finishReason ?? (r.error ? 'error' : (r.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop');
    return { content, finishReason, ...(r.error ? { error: r.error } : {}), ...(r.usage ? { usage: r.usage } : {}) };
  }
}

/** A model that echoes the last user message's text: handy for demos. */
export const echoModel = (): ScriptedModel =>
  new ScriptedModel([], {
    whenExhausted: (req) => {
      const last = [...req.messages].reverse().find((m) => m.role === 'user');
      const text = last && last.role === 'user' ? last.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') : '';
      return `echo: ${text}`;
    },
  });
