import { existsSync } from 'node:fs';
import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * One piece of a CLI command's work on a worker thread (the chain check beside the audit's fold, a segment of a
 * long `verify`). The worker's entry posts {@link WorkerTaskMessage}s: progress counts, then its value or why it
 * failed.
 */

/** What a task's worker posts to its parent. */
export type WorkerTaskMessage<T> =
  | { readonly kind: 'progress'; readonly events: number }
  | { readonly kind: 'done'; readonly value: T }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Whether a command may put work on worker threads: `off` with `STEERLOG_CHAIN_THREAD=0` or when the compiled entry
 * `entry` (a file path) is not there (running from TypeScript sources); `forced` with `STEERLOG_CHAIN_THREAD=1`
 * (whatever the input's size and the machine's cores); else `auto` (the command decides by size and cores).
 */
export const workerMode = (env: NodeJS.ProcessEnv, entry: string): 'off' | 'auto' | 'forced' =>
  env.STEERLOG_CHAIN_THREAD === '0' || !existsSync(entry) ? 'off' : env.STEERLOG_CHAIN_THREAD === '1' ? 'forced' : 'auto';

/** A running task. */
export interface WorkerTask<T> {
  /** The worker's value; rejects when the worker fails, cannot start or exits before posting it. */
  readonly result: Promise<T>;
  /** Stops the worker (its result then never settles, or rejects). */
  stop(): Promise<void>;
}

/** Options of {@link startWorkerTask}. */
export interface WorkerTaskOptions {
  /** Called with each progress count the worker posts. @defaultValue none */
  readonly onProgress?: (events: number) => void;
  /** The worker's heap limits. @defaultValue Node's */
  readonly resourceLimits?: ResourceLimits;
}

/** Starts the compiled worker entry `entry` (a file path) with `data` as its `workerData`. */
export const startWorkerTask = <T>(entry: string, data: unknown, options: WorkerTaskOptions = {}): WorkerTask<T> => {
  const worker = new Worker(entry, { workerData: data, ...(options.resourceLimits ? { resourceLimits: options.resourceLimits } : {}) });
  const result = new Promise<T>((resolve, reject) => {
    worker.on('message', (m: WorkerTaskMessage<T>) => {
      if (m.kind === 'progress') options.onProgress?.(m.events);
      else if (m.kind === 'done') resolve(m.value);
      else reject(new Error(m.message));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`a worker thread exited (${code}) before its result`)));
  });
  result.catch(() => {}); // the caller awaits it; never an unhandled rejection when the caller stopped first
  return { result, stop: async () => void (await worker.terminate()) };
};

/** The worker side: runs `task`, posting its progress and then its value (or its failure's message) to the parent. */
export const serveWorkerTask = <T>(post: (m: WorkerTaskMessage<T>) => void, task: (progress: (events: number) => void) => Promise<T>): void => {
  task((events) => post({ kind: 'progress', events })).then(
    (value) => post({ kind: 'done', value }),
    (e: unknown) => post({ kind: 'failed', message: e instanceof Error ? e.message : String(e) }),
  );
};
