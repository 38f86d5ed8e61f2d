/**
 * One lock per key: critical sections for the same key run one after another, in the order they asked; different
 * keys never wait for each other. A section that throws releases the lock all the same. The children manager
 * linearises delivery, the settlement decision and disposal of one child with it (keyed by the child's session id),
 * the runtime the opening of one session, the JSONL store the writes of one stream's snapshot file.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `section` once every earlier section for `key` has settled; resolves (or rejects) with its result. */
  run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve();
    const result = before.then(section, section);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Whether any section for `key` is queued or running. */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }
}
