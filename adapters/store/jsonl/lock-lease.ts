import type { DirectoryLock } from './dir-lock.js';

/**
 * The directory lock as the commit queue holds it: a commit that has more appends queued behind it keeps the lock
 * for the next commit instead of releasing and re-taking it, for at most `maxHoldMs` from when it was taken, so
 * other processes still get their turn. Taking the lock creates and deletes a generation file (directory metadata
 * that the next fsync must also flush, and two synchronous file-system calls on the event loop); keeping it across
 * back-to-back commits saves that for all but the first.
 */
export class LockLease {
  readonly #lock: DirectoryLock;
  readonly #maxHoldMs: number;
  #heldSince = -1;

  /** @param maxHoldMs the longest one lease keeps the lock across commits. @defaultValue 25 */
  constructor(lock: DirectoryLock, maxHoldMs = 25) {
    this.#lock = lock;
    this.#maxHoldMs = maxHoldMs;
  }

  /** Takes the lock unless this lease still holds it. */
  async acquire(): Promise<void> {
    if (this.#heldSince >= 0) return;
    await this.#lock.acquire();
    this.#heldSince = performance.now();
  }

  /** Releases the lock, unless `keep` (more commits are queued) and the lease is younger than `maxHoldMs`. */
  release(keep = false): void {
    if (this.#heldSince < 0) return;
    if (keep && performance.now() - this.#heldSince < this.#maxHoldMs) return;
    this.#heldSince = -1;
    this.#lock.release();
  }
}
