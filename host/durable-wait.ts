import type { Agent } from '../runtime/agent.js';
import type { Logger } from '../runtime/logger.js';
import { HostError } from './errors.js';

/** How long a `durable: true` prompt waits for the store by default, ms. */
export const DEFAULT_DURABLE_TIMEOUT_MS = 10_000;

/**
 * Waits until the session's log is in the store up to and including the admission at `seq`, for at most
 * `timeoutMs`. A store that fails the write answers `internal {seq, messageId}`; one that does not answer in time
 * (unreachable, hung) answers `durable-timeout {seq, timeoutMs, messageId}`. Both are retryable with that message id
 * (the host's own when the client sent none, so a retry is never a second admission): the admission is in the live
 * log, and a retry gets its receipt back once the store holds it. The write itself goes on after a timeout.
 */
export const waitDurable = async (agent: Agent, seq: number, messageId: string, timeoutMs: number, logger: Logger): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const written = agent.checkpoint().then(
    () => ({ kind: 'written' as const }),
    (e: unknown) => ({ kind: 'failed' as const, error: e }),
  );
  const late = new Promise<{ kind: 'timeout' }>((resolve) => (timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs)));
  const outcome = await Promise.race([written, late]).finally(() => clearTimeout(timer));
  switch (outcome.kind) {
    case 'written':
      return;
    case 'failed':
      logger.warn(`session ${agent.sessionId}: admission at seq ${seq} is not durable`, outcome.error);
      throw new HostError('internal', `the admission at seq ${seq} is not durable yet; retry with messageId ${messageId}`, { seq, messageId });
    case 'timeout':
      logger.warn(`session ${agent.sessionId}: the store did not confirm the admission at seq ${seq} within ${timeoutMs} ms`);
      throw new HostError('durable-timeout', `the store did not confirm the admission at seq ${seq} within ${timeoutMs} ms; retry with messageId ${messageId}`, { seq, timeoutMs, messageId });
  }
};
