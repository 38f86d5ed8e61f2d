import type { Agent } from '../../runtime/agent.js';
import type { ChildManager } from '../../runtime/children/child-manager.js';
import type { ModelPort } from '../../runtime/ports/model.js';
import { readFile } from 'node:fs/promises';
import { EchoModel } from '../model/echo/echo-model.js';
import { loadUserModule } from './load-module.js';

/** A refused `--model` value. */
export class ModelSpecError extends Error {
  readonly code = 'invalid-model-spec' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ModelSpecError';
  }
}
/** What `steerlog serve` hands a model module's `setup(agent, context)` besides the agent: the runtime's children. */
export interface ModelSetupContext {
  /** The runtime's continuable and one-shot children: a module's hook may start a child of the agent. */
  readonly children: ChildManager;
}

/** A model module's optional `setup` export. */
export type ModelSetup = (agent: Agent, context: ModelSetupContext) => void;

export const isModelSpecError = (e: unknown): e is ModelSpecError => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'invalid-model-spec';

/** What `serve`'s flags say about a provider model; each wins over the provider's environment variable. */
export interface ProviderOptions {
  /** `--model-base-url`: instead of `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`. */
  readonly baseUrl?: string;
  /** The key read from `--model-key-file`: instead of `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. */
  readonly apiKey?: string;
}

/**
 * The model a `--model` value names: `echo` (the default: streams its input back slowly), `openai:<model>` (an
 * OpenAI-compatible chat-completions endpoint on the optional `openai` SDK, else the built-in fetch client:
 * `OPENAI_BASE_URL`, `OPENAI_API_KEY`), `anthropic:<model>` (the Messages
 * API on the optional `@anthropic-ai/sdk`: `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`, `STEERLOG_ANTHROPIC_MAX_TOKENS`), or `module:<path>` (a module
 * whose default export is a ModelPort or a function returning one). A `module:` may also export `setup(agent, context)`:
 * serve calls it for every session it makes live, before any input reaches it, so the module can install agent hooks
 * (a pre-step policy, a listener that injects context, a hook that starts a child through `context.children`) next
 * to its model.
 */
export const openModel = async (
  spec: string,
  env: NodeJS.ProcessEnv,
  provider: ProviderOptions = {},
): Promise<{ model: ModelPort; acceptsImages: boolean; setup?: ModelSetup }> => {
  if ((provider.baseUrl !== undefined || provider.apiKey !== undefined) && !spec.startsWith('openai:') && !spec.startsWith('anthropic:')) {
    throw new ModelSpecError(`--model-base-url and --model-key-file apply to openai: and anthropic: models only, not "${spec}"`);
  }
  if (spec === 'echo') {
    const delay = env['STEERLOG_ECHO_DELAY_MS'];
    return { model: new EchoModel(delay !== undefined ? { delayMs: Number(delay) } : {}), acceptsImages: true };
  }
  if (spec.startsWith('openai:')) {
    const name = spec.slice('openai:'.length);
    if (!name) throw new ModelSpecError('openai: needs a model name, e.g. openai:gpt-4o-mini');
    const baseUrl = provider.baseUrl ?? env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1';
    const apiKey = provider.apiKey ?? env['OPENAI_API_KEY'];
    // the official SDK when it is installed; else the hand-written fetch client (same wire, same failures)
    const { openOpenAiSdkModel } = await import('../model/openai/openai-sdk-chat-model.js');
    const { isModelDriverMissingError } = await import('../model/model-driver.js');
    try {
      return { model: await openOpenAiSdkModel({ model: name, baseUrl, ...(apiKey !== undefined ? { apiKey } : {}) }), acceptsImages: true };
    } catch (e) {
      if (!isModelDriverMissingError(e)) throw e;
    }
    const { OpenAiChatModel } = await import('../model/openai/openai-chat-model.js');
    return { model: new OpenAiChatModel({ model: name, baseUrl, ...(apiKey !== undefined ? { apiKey } : {}) }), acceptsImages: true };
  }
  if (spec.startsWith('anthropic:')) {
    const name = spec.slice('anthropic:'.length);
    if (!name) throw new ModelSpecError('anthropic: needs a model name, e.g. anthropic:claude-sonnet-4-5');
    const { openAnthropicModel } = await import('../model/anthropic/anthropic-messages-model.js');
    const maxTokens = env['STEERLOG_ANTHROPIC_MAX_TOKENS'];
    const baseUrl = provider.baseUrl ?? env['ANTHROPIC_BASE_URL'];
    const apiKey = provider.apiKey ?? env['ANTHROPIC_API_KEY'];
    if (maxTokens !== undefined && !/^[1-9]\d*$/.test(maxTokens)) throw new ModelSpecError(`STEERLOG_ANTHROPIC_MAX_TOKENS: expected a positive integer, got "${maxTokens}"`);
    return {
      model: await openAnthropicModel({
        model: name,
        ...(baseUrl !== undefined ? { baseUrl } : {}),
        ...(apiKey !== undefined ? { apiKey } : {}),
        ...(maxTokens !== undefined ? { maxTokens: Number(maxTokens) } : {}),
      }),
      acceptsImages: true,
    };
  }
  if (spec.startsWith('module:')) {
    const mod = await loadUserModule(spec.slice('module:'.length));
    const exported = mod['default'];
    const model = typeof exported === 'function' ? await (exported as () => ModelPort | Promise<ModelPort>)() : exported;
    if (typeof model !== 'object' || model === null || typeof (model as ModelPort).complete !== 'function') {
      throw new ModelSpecError(`${spec}: the default export is not a model (an object with complete(request))`);
    }
    const setup = mod['setup'];
    if (setup !== undefined && typeof setup !== 'function') throw new ModelSpecError(`${spec}: the export setup is not a function (setup(agent))`);
    return { model: model as ModelPort, acceptsImages: true, ...(setup !== undefined ? { setup: setup as ModelSetup } : {}) };
  }
  throw new ModelSpecError(`unknown model "${spec}": expected echo, openai:<model>, anthropic:<model> or module:<path>`);
};

/** The API key in a `--model-key-file`: its content without surrounding whitespace; an unreadable or empty file is a {@link ModelSpecError}. */
export const readModelKeyFile = async (path: string): Promise<string> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ModelSpecError(`--model-key-file ${path}: cannot read it (${(e as { code?: string }).code ?? 'error'})`);
  }
  const key = text.trim();
  if (!key) throw new ModelSpecError(`--model-key-file ${path}: the file is empty`);
  return key;
};
