/**
 * Serializes commits inside one store instance and, in group mode, lets appends that arrive while a commit is
 * running share the next one: no timer, no added latency for a lone writer — a batch is simply whatever queued
 * up during the previous fsync. `maxGroup` 1 gives one commit (one fsync pair) per append.
 */
export class CommitQueue<T> {
  readonly #commit: (items: T[], more: () => boolean) => Promise<void>;
  readonly #maxGroup: number;
  readonly #queue: T[] = [];
  #running: Promise<void> | undefined;

  /** `commit` gets the group and a function telling whether more items are queued behind it. */
  constructor(commit: (items: T[], more: () => boolean) => Promise<void>, maxGroup: number) {
    this.#commit = commit;
    this.#maxGroup = Math.max(1, maxGroup);
  }

  push(item: T): void {
    this.#queue.push(item);
    this.#running ??= this.#run();
  }

  /** Resolves once everything queued so far is committed (or failed). */
  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  readonly #more = (): boolean => this.#queue.length > 0;

  async #run(): Promise<void> {
    try {
      await null; // let appends issued in the same tick join the first group
      while (this.#queue.length > 0) {
        const group = this.#queue.splice(0, this.#maxGroup);
        await this.#commit(group, this.#more); // never rejects: the commit settles each item itself
      }
    } finally {
      this.#running = undefined;
    }
  }
}
