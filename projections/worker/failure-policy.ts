/**
 * What a worker does when an event cannot be applied (the fold or the table handler throws, or the event does not
 * parse). Nothing is ever skipped silently: an event is applied, parked (kept in the dead-letter list with its
 * position, stream and error, and counted by `status`), or the worker stops.
 *
 * - `'stop'` (the default): the worker ends with `ProjectionFailedError`; nothing at or after the failing event is
 *   committed; fix the code and start it again to resume from the last checkpoint.
 * - `'park'`: the event goes to the dead-letter list, the projection continues with the next event;
 *   `replayParked` (`steerlog projections replay-parked`) re-applies the parked events later.
 * - `{ retry, backoffMs, maxBackoffMs, then }`: a table projection's batch is tried again up to `retry` times, waiting
 *   `backoffMs` doubled each time up to `maxBackoffMs`, then `then` applies. A fold (`evolve`) is deterministic, so
 *   retrying it gives the same result: for folds, `then` applies at once.
 */
export type FailurePolicy =
  | 'stop'
  | 'park'
  | {
      /** How many more times to try a failing batch. */
      readonly retry: number;
      /** The first wait. @defaultValue 100 */
      readonly backoffMs?: number;
      /** The longest wait. @defaultValue 5000 */
      readonly maxBackoffMs?: number;
      /** What to do once the retries are spent. @defaultValue 'stop' */
      readonly then?: 'stop' | 'park';
    };

/** The policy once retries are spent (or for a fold): stop or park. */
export const finalPolicy = (policy: FailurePolicy): 'stop' | 'park' => (typeof policy === 'string' ? policy : (policy.then ?? 'stop'));

/** The waits of a policy's retries, in order (empty for `'stop'` and `'park'`). */
export const retryDelays = (policy: FailurePolicy): number[] => {
  if (typeof policy === 'string') return [];
  const first = Math.max(0, policy.backoffMs ?? 100);
  const max = Math.max(first, policy.maxBackoffMs ?? 5000);
  return Array.from({ length: Math.max(0, Math.floor(policy.retry)) }, (_, i) => Math.min(max, first * 2 ** i));
};

/** Parses a policy as the CLI spells it: `stop`, `park`, `retry:<n>[:park|:stop]`. Null when it is none of them. */
export const parseFailurePolicy = (text: string): FailurePolicy | null => {
  if (text === 'stop' || text === 'park') return text;
  const m = /^retry:(\d{1,3})(?::(stop|park))?$/.exec(text);
  return m ? { retry: Number(m[1]), then: (m[2] as 'stop' | 'park' | undefined) ?? 'stop' } : null;
};
