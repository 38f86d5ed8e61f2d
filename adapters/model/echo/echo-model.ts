import type { ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';

export interface EchoModelOptions {
  /** Pause before each streamed word, ms (slow enough to queue and steer by hand). @defaultValue 150 */
  readonly delayMs?: number;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The model `steerlog serve` runs when none is configured: it answers `echo: <the user messages of this step>`,
 * streaming one word at a time with a pause, and stops at once when the turn is canceled. No network, no key.
 */
export class EchoModel implements ModelPort {
  readonly provider = 'echo';
  readonly model = 'echo-1';
  readonly #delayMs: number;

  constructor(options: EchoModelOptions = {}) {
    this.#delayMs = options.delayMs ?? 150;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    // the user messages after the last assistant message: what this step was given
    const lastAssistant = request.messages.map((m) => m.role).lastIndexOf('assistant');
    const input = request.messages
      .slice(lastAssistant + 1)
      .filter((m) => m.role === 'user')
      .map((m) => (m.role === 'user' ? m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') : ''))
      .join(' / ');
    const words = `echo: ${input}`.split(/(?<= )/);
    let text = '';
    for (const word of words) {
      await sleep(this.#delayMs, request.signal);
      request.onChunk({ type: 'text', text: word });
      text += word;
    }
    return { content: [{ type: 'text', text }], finishReason: 'stop' };
  }
}
