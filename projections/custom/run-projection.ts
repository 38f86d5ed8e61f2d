import * as E from 'fp-ts/lib/Either.js';
import type { Observable } from 'rxjs';
import type { ProjectionKey } from '../checkpoints/checkpoint-store.js';
import { ProjectionFailedError } from '../errors.js';
import { toLogEvent } from '../sources/from-store.js';
import { applyProjectionEvent } from './apply-event.js';
import type { Projection } from './define-projection.js';
import { LowWaterMark } from './low-water-mark.js';
import { PositionWaiters } from './position-waiters.js';
import type { ProjectionRun, RunProjectionOptions } from './projection-run.js';
import { consumeResubscribing, lagAfter, positionIn, subscribeAfter } from './projection-source.js';
import { initialStateOf, RunCheckpoints } from './run-checkpoints.js';

/** The run's options and handle, declared in projection-run.ts, exported here beside `runProjection`. */
export type { ProjectionRun, RunProjectionOptions } from './projection-run.js';

class RunEndedError extends Error {
  constructor() {
    super('the projection run ended');
    this.name = 'RunEndedError';
  }
}

const quiet = <T>(p: Promise<T>): Promise<T> => {
  p.catch(() => undefined);
  return p;
};

class ProjectionRunner<S> implements ProjectionRun<S> {
  readonly key: ProjectionKey;
  readonly checkpoints$: Observable<bigint | null>;
  readonly caughtUp: Promise<void>;
  readonly done: Promise<void>;

  readonly #projection: Projection<S>;
  readonly #options: RunProjectionOptions;
  readonly #commits: RunCheckpoints<S>;
  readonly #abort = new AbortController();
  #lwm = new LowWaterMark();
  #state!: S;
  #position: bigint | null = null;
  #ended = false;
  readonly #waiters = new PositionWaiters();
  #resolveCaughtUp!: () => void;
  #rejectCaughtUp!: (e: unknown) => void;
  #resolveDone!: () => void;
  #rejectDone!: (e: unknown) => void;
  #loop: Promise<void>;

  constructor(projection: Projection<S>, options: RunProjectionOptions) {
    this.#projection = projection;
    this.#options = options;
    this.key = { name: projection.name, version: projection.version };
    this.#commits = new RunCheckpoints<S>(
      this.key,
      options,
      () => ({ mark: this.#lwm.mark, position: this.#position, state: this.#state }),
      (e) => this.#end(e),
    );
    this.checkpoints$ = this.#commits.checkpoints$;
    this.caughtUp = quiet(
      new Promise<void>((resolve, reject) => {
        this.#resolveCaughtUp = resolve;
        this.#rejectCaughtUp = reject;
      }),
    );
    this.done = quiet(
      new Promise<void>((resolve, reject) => {
        this.#resolveDone = resolve;
        this.#rejectDone = reject;
      }),
    );
    this.#loop = this.#run().catch((e: unknown) => this.#end(e));
  }

  state(): S {
    return this.#state;
  }
  position(): bigint | null {
    return this.#position;
  }
  checkpoint(): bigint | null {
    return this.#commits.committed;
  }

  waitFor(position: bigint): Promise<void> {
    if (this.#position !== null && this.#position >= position) return Promise.resolve();
    if (this.#ended) return Promise.reject(new RunEndedError());
    return quiet(this.#waiters.add(position));
  }

  lag(): Promise<bigint> {
    return lagAfter(this.#options, this.#commits.committed);
  }

  flush(): Promise<void> {
    return this.#commits.commit();
  }

  async stop(): Promise<void> {
    if (!this.#ended) {
      this.#abort.abort();
      await this.#loop;
      try {
        await this.#commits.commit();
        await this.#commits.saving;
        this.#end(null);
      } catch (e) {
        this.#end(e); // the final save failed: `done` rejects with the store's error
      }
    }
    await this.done.catch(() => undefined);
  }

  abandon(): void {
    this.#commits.abandon();
    this.#abort.abort();
    this.#end(null);
  }

  async #run(): Promise<void> {
    const { checkpoints } = this.#options;
    const loaded = (this.#options.from ?? 'checkpoint') === 'checkpoint' ? await checkpoints.load(this.key) : null;
    if (this.#ended) return;
    if (loaded) {
      this.#state = JSON.parse(loaded.state) as S;
      this.#position = loaded.position;
      this.#commits.restored(loaded.position);
      this.#waiters.wake(loaded.position);
    } else this.#state = initialStateOf(this.#projection);
    this.#lwm = new LowWaterMark(this.#position);
    const signal = this.#abort.signal;
    await consumeResubscribing(
      () => this.#consume(signal),
      () => this.#position,
      () => this.#ended || signal.aborted,
    );
  }

  /** Subscribes after the last folded position and folds until the subscription ends. */
  async #consume(signal: AbortSignal): Promise<void> {
    for await (const message of subscribeAfter(this.#options, this.#position, signal)) {
      if (this.#ended || signal.aborted) break;
      if (message.kind === 'caught-up') {
        await this.#commits.commit();
        this.#resolveCaughtUp();
        continue;
      }
      for (const recorded of message.events) {
        if (this.#ended || signal.aborted) return;
        const position = positionIn(this.#options, recorded);
        this.#lwm.begin(position);
        const parsed = toLogEvent(recorded);
        if (E.isLeft(parsed)) throw this.#failure(recorded.stream, position, parsed.left);
        const where = { stream: recorded.stream, revision: recorded.revision, position: recorded.position };
        try {
          this.#state = applyProjectionEvent(this.#projection, this.#state, where, parsed.right);
        } catch (e) {
          throw this.#failure(recorded.stream, position, e);
        }
        this.#lwm.complete(position);
        this.#position = position;
        this.#waiters.wake(position);
        const batch = this.#commits.counted();
        if (batch) await batch;
      }
    }
  }

  #failure(stream: string, position: bigint, cause: unknown): ProjectionFailedError {
    return new ProjectionFailedError(this.#projection.name, this.#projection.version, stream, position, cause);
  }

  /** Ends the run once: `error` null for a stop or an abandon. A failure commits nothing more. */
  #end(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#abort.abort();
    this.#commits.stopTimer();
    const reason = error ?? new RunEndedError();
    this.#waiters.rejectAll(reason);
    this.#rejectCaughtUp(reason);
    this.#commits.complete();
    if (error === null) this.#resolveDone();
    else this.#rejectDone(error);
  }
}

/**
 * Runs a custom projection: loads its checkpoint `(name, version) → {position, state}`, subscribes to the store
 * after that position (catch-up, then live), folds each event with `evolve`, and commits `{position, state}`
 * together — only ever the contiguous low-water mark, every `batchSize` events, `flushIntervalMs` after the oldest
 * uncommitted event, when caught up, and on `stop()`. Stored events are pulled a page at a time (at most one page
 * ahead of the fold), live ones one at a time.
 * A failing event stops the run with `ProjectionFailedError` (position = that event's; nothing at or after it is
 * committed); fix the projection and run it again to resume from the last checkpoint.
 */
export const runProjection = <S>(projection: Projection<S>, options: RunProjectionOptions): ProjectionRun<S> =>
  new ProjectionRunner(projection, options);
