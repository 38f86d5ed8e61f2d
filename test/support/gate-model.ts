import type { ModelPort, ModelRequest, ModelResponse } from '../../runtime/ports/model.js';

/** The user texts a request's step was given (after the last assistant message). */
export const stepInputs = (request: ModelRequest): string[] => {
  const lastAssistant = request.messages.map((m) => m.role).lastIndexOf('assistant');
  return request.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'user')
    .map((m) => (m.role === 'user' ? m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('') : ''));
};

/**
 * A model whose n-th request (1-based) blocks until the test releases it: a test can act while a turn is inside
 * its model step, deterministically. Answers `reply <n>: <inputs joined by " + ">`; rejects when the turn is canceled.
 */
export class GateModel implements ModelPort {
  readonly provider = 'gate';
  readonly model = 'gate-1';
  readonly requests: ModelRequest[] = [];
  readonly #released = new Map<number, () => void>();
  readonly #releasedEarly = new Set<number>();
  readonly #started = new Map<number, { promise: Promise<ModelRequest>; resolve: (r: ModelRequest) => void }>();

  /** Resolves when request n has started (the turn is inside its model step). */
  started(n: number): Promise<ModelRequest> {
    return this.#startedEntry(n).promise;
  }
  /** Lets request n answer (now, or as soon as it starts). */
  release(n: number): void {
    const r = this.#released.get(n);
    if (r) r();
    else this.#releasedEarly.add(n);
  }
  /** Releases every request from now on without waiting. */
  releaseAll(): void {
    this.#all = true;
    for (const r of this.#released.values()) r();
  }
  #all = false;

  #startedEntry(n: number) {
    let e = this.#started.get(n);
    if (!e) {
      let resolve!: (r: ModelRequest) => void;
      const promise = new Promise<ModelRequest>((r) => (resolve = r));
      e = { promise, resolve };
      this.#started.set(n, e);
    }
    return e;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const n = this.requests.length;
    this.#startedEntry(n).resolve(request);
    if (!this.#all && !this.#releasedEarly.has(n)) {
      await new Promise<void>((resolve, reject) => {
        this.#released.set(n, resolve);
        if (request.signal.aborted) reject(new Error('aborted'));
        request.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    }
    return { content: [{ type: 'text', text: `reply ${n}: ${stepInputs(request).join(' + ')}` }], finishReason: 'stop' };
  }
}
