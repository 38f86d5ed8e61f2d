/**
 * A version counter that live subscriptions wait on. Take `version` before reading, then
 * `waitForChange(version)`: an append between the read and the wait is never missed.
 */
export class ChangeNotifier {
  #version = 0;
  #waiters = new Set<() => void>();
  #closed = false;

  get version(): number {
    return this.#version;
  }
  get closed(): boolean {
    return this.#closed;
  }

  notify(): void {
    this.#version++;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }

  close(): void {
    this.#closed = true;
    this.notify();
  }

  /** Resolves true when the version moved past `since`, false when closed or aborted. */
  waitForChange(since: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#closed || signal?.aborted) return Promise.resolve(false);
    if (this.#version !== since) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        this.#waiters.delete(wake);
        resolve(false);
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(!this.#closed);
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
