interface Waiter {
  readonly position: bigint;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** Callers waiting for a run to fold a position: each resolves once that position (or a later one) is folded. */
export class PositionWaiters {
  #waiters: Waiter[] = [];

  /** Waits for `position`: resolves at the first `wake` with it or a later one, rejects at `rejectAll`. */
  add(position: bigint): Promise<void> {
    return new Promise<void>((resolve, reject) => this.#waiters.push({ position, resolve, reject }));
  }

  /** Resolves every waiter for `position` or an earlier one. */
  wake(position: bigint): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.#waiters) (position >= w.position ? w.resolve() : still.push(w));
    this.#waiters = still;
  }

  /** Rejects every waiter with `reason`. */
  rejectAll(reason: unknown): void {
    for (const w of this.#waiters) w.reject(reason);
    this.#waiters = [];
  }
}
