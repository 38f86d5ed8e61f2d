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
  /**
   * The share of a loop turn's budget that the callers of {@link LoopSlices.first} may run before the callers of
   * `next()` are released, when both wait (between 0 and 1): the rest of the budget goes to `next()`'s callers, and
   * back to `first`'s if those run out. So `first`'s callers never wait behind a queue of `next()`'s, and
   * `next()`'s get the rest of every loop turn's budget (unless a slice of `first`'s overran it).
   * @defaultValue 0.75
   */
  readonly firstShare?: number;
}

/** One queue of waiting callers, in order, from `head` on (a queue without a shift per release). */
class Waiters {
  list: (() => void)[] = [];
  head = 0;
  get size(): number {
    return this.list.length - this.head;
  }
  push(resolve: () => void): void {
    this.list.push(resolve);
  }
  /** The next caller, taken off the queue; the queue's storage is reset when empty and compacted when mostly spent. */
  take(): () => void {
    const resolve = this.list[this.head]!;
    this.list[this.head++] = noop;
    if (this.head === this.list.length) {
      this.list = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.list.length) {
      // drop the released prefix once it is most of the array (amortized O(1) per caller)
      this.list = this.list.slice(this.head);
      this.head = 0;
    }
    return resolve;
  }
}

/**
 * Slices of work released in the check phase of the event loop, at most `budgetMs` of them per turn of the loop, first
 * come first served within each of two queues: the callers of {@link LoopSlices.first} before those of `next()`. Without it, the work of every session whose turn ended in one timer phase (the next turn's
 * `turn/start`, its claim, `step/start`, the `user/message`s, the request: a dozen appends, each validated, chained,
 * serialized and published) ran in that phase for all of them at once, and every request and timer waited behind it.
 * With it, a turn of the loop runs at most `budgetMs` of that work, then the pending I/O and timers, then the rest.
 *
 * A caller released runs its slice in the microtasks after its release; the next caller is released in the tick after
 * them, once the microtasks that slice chained ran (its awaits of settled promises included: an admission's checks
 * before its append, its receipt's write), so the budget is checked between whole slices (a slice that runs long is
 * not cut, and one that waits for I/O ends its slice there). An idle process pays one `setImmediate` per slice.
 */
export class LoopSlices implements LoopGate {
  readonly #budgetMs: number;
  readonly #firstShare: number;
  readonly #now: () => number;
  readonly #schedule: (run: () => void) => void;
  readonly #first = new Waiters();
  readonly #rest = new Waiters();
  #armed = false;

  /**
   * A gate onto the same slices whose callers go before those of `next()`: within each loop turn they are released
   * first, up to `firstShare` of the budget while `next()`'s callers wait (then the others; both first come first
   * served within their own queue). `steerlog serve` gives it to the admissions of prompts, whose receipts a client
   * waits for, and `next()` to the sessions' turns, so a prompt does not queue behind the checkpoints of every turn.
   */
  readonly first: LoopGate = { next: () => this.#wait(this.#first) };

  constructor(options: LoopSlicesOptions = {}) {
    const budgetMs = options.budgetMs ?? 4;
    if (typeof budgetMs !== 'number' || !(budgetMs > 0) || !Number.isFinite(budgetMs)) throw invalidArgument('LoopSlices(budgetMs)', 'expected a positive number of milliseconds');
    const firstShare = options.firstShare ?? 0.75;
    if (typeof firstShare !== 'number' || !(firstShare >= 0 && firstShare <= 1)) throw invalidArgument('LoopSlices(firstShare)', 'expected a number between 0 and 1');
    this.#budgetMs = budgetMs;
    this.#firstShare = firstShare;
    this.#now = options.now ?? (() => performance.now());
    this.#schedule = options.schedule ?? ((run) => void setImmediate(run));
  }

  /** How many callers wait for their slice (of `next()` and of `first` together). */
  get waiting(): number {
    return this.#first.size + this.#rest.size;
  }

  next(): Promise<void> {
    return this.#wait(this.#rest);
  }

  #wait(queue: Waiters): Promise<void> {
    return new Promise<void>((resolve) => {
      queue.push(resolve);
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
    const firstUntil = this.#budgetMs * this.#firstShare;
    const step = (): void => {
      if (this.waiting === 0) return;
      const spent = this.#now() - started;
      // the budget is spent: the rest wait for the next turn of the loop (armed from the check phase, it runs there)
      if (spent >= this.#budgetMs) return this.#arm();
      const queue = this.#first.size > 0 && (spent < firstUntil || this.#rest.size === 0) ? this.#first : this.#rest.size > 0 ? this.#rest : this.#first;
      queue.take()();
      // after the released caller's slice: all the microtasks it chains (its continuation was queued first, and a
      // tick runs only once the microtask queue is empty), so the budget counts its whole slice, not its first hop
      queueMicrotask(() => process.nextTick(step));
    };
    step();
  }
}

const noop = (): void => {};
