import { invalidArgument } from './arguments.js';

/**
 * Where a piece of work that may wait a turn of the event loop asks for its slice: `next()` resolves when it may run.
 * The sessions' drivers ask between turns (a continuing driver's next turn), the host before a prompt's admission.
 */
export interface LoopGate {
  /** Resolves when the caller may run its next slice of work (never synchronously). */
  next(): Promise<void>;
}

/** Options of {@link LoopSlices}. */
export interface LoopSlicesOptions {
  /**
   * How long the slices released in one turn of the event loop may run, ms: once they ran this long, the callers
   * still waiting are released in the next turn, after the timers and the I/O callbacks that arrived meanwhile.
   * @defaultValue 4
   */
  readonly budgetMs?: number;
  /** The clock the budget is measured with (ms). @defaultValue performance.now */
  readonly now?: () => number;
  /** Runs a callback in the check phase of the event loop. @defaultValue setImmediate */
  readonly schedule?: (run: () => void) => void;
}

/**
 * Slices of work released in the check phase of the event loop, first come first served, at most `budgetMs` of them
 * per turn of the loop. Without it, the work of every session whose turn ended in one timer phase (the next turn's
 * `turn/start`, its claim, `step/start`, the `user/message`s, the request: a dozen appends, each validated, chained,
 * serialized and published) ran in that phase for all of them at once, and every request and timer waited behind it.
 * With it, a turn of the loop runs at most `budgetMs` of that work, then the pending I/O and timers, then the rest.
 *
 * A caller released runs its slice in the microtasks after its release; the next caller is released once that slice
 * yields (awaits), so the budget is checked between slices (a slice that runs long is not cut). An idle process pays
 * one `setImmediate` per slice.
 */
export class LoopSlices implements LoopGate {
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #schedule: (run: () => void) => void;
  /** The callers waiting, in order, from `#head` on (a queue without a shift per release). */
  #waiting: (() => void)[] = [];
  #head = 0;
  #armed = false;

  constructor(options: LoopSlicesOptions = {}) {
    const budgetMs = options.budgetMs ?? 4;
    if (typeof budgetMs !== 'number' || !(budgetMs > 0) || !Number.isFinite(budgetMs)) throw invalidArgument('LoopSlices(budgetMs)', 'expected a positive number of milliseconds');
    this.#budgetMs = budgetMs;
    this.#now = options.now ?? (() => performance.now());
    this.#schedule = options.schedule ?? ((run) => void setImmediate(run));
  }

  /** How many callers wait for their slice. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#arm();
    });
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    this.#schedule(() => this.#release());
  }

  /** Releases the waiting callers one slice at a time until the budget of this turn of the loop is spent. */
  #release(): void {
    this.#armed = false;
    const started = this.#now();
    const step = (): void => {
      if (this.waiting === 0) {
        this.#waiting = [];
        this.#head = 0;
        return;
      }
      // the budget is spent: the rest wait for the next turn of the loop (armed from the check phase, it runs there)
      if (this.#now() - started >= this.#budgetMs) return this.#arm();
      const resolve = this.#waiting[this.#head]!;
      this.#waiting[this.#head++] = noop;
      // drop the released prefix once it is most of the array (amortized O(1) per caller)
      if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
        this.#waiting = this.#waiting.slice(this.#head);
        this.#head = 0;
      }
      resolve();
      // after the released caller's first synchronous slice (its continuation was queued first)
      queueMicrotask(step);
    };
    step();
  }
}

const noop = (): void => {};
