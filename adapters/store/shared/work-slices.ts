/**
 * Long synchronous work of a store (a group commit drafting thousands of lines, encoding its journal record) cut into
 * slices: the work asks `due` between its pieces and, once it ran `sliceMs` since it started or last paused, awaits
 * `pause()`, which lets the event loop run what waits (timers, the I/O that arrived, the immediates queued before)
 * and resumes in the check phase. A piece is never cut; work shorter than a slice never pauses.
 */
export class WorkSlices {
  readonly #sliceMs: number;
  readonly #now: () => number;
  readonly #schedule: (run: () => void) => void;
  #since: number;

  /** `sliceMs` ≥ 0 (0 pauses between every two pieces); `now` and `schedule` are injectable for tests. */
  constructor(sliceMs: number, now: () => number = () => performance.now(), schedule: (run: () => void) => void = (run) => void setImmediate(run)) {
    this.#sliceMs = sliceMs;
    this.#now = now;
    this.#schedule = schedule;
    this.#since = now();
  }

  /** The work ran a slice's length since it started or last paused: it should `pause()` before its next piece. */
  get due(): boolean {
    return this.#now() - this.#since >= this.#sliceMs;
  }

  /** Lets the event loop run, then resumes (in the check phase); the next slice starts then. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => this.#schedule(resolve));
    this.#since = this.#now();
  }
}
