import type { SessionKind } from '../domain/events.js';
import { Agent, type AgentOptions } from './agent.js';
import { consoleLogger, type Logger } from './logger.js';
import { randomIds, systemClock, type Clock, type IdSource } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { ModelPort } from './ports/model.js';
import { SessionLog } from './session-log.js';
import type { Tool } from './tools.js';

export interface RuntimeOptions {
  /** Where session streams are kept. */
  readonly store: EventStore;
  readonly model: ModelPort;
  readonly tools?: readonly Tool<Agent>[];
  /** @defaultValue the system clock */
  readonly clock?: Clock;
  /** Event and session ids. @defaultValue random UUIDs */
  readonly ids?: IdSource;
  /** Where contained listener errors and background write failures are reported. @defaultValue console.warn */
  readonly logger?: Logger;
  /** Write-behind window of every session (ms). @defaultValue 200 */
  readonly writeBatchDelayMs?: number;
  /** Parallel-safe tool calls at once. @defaultValue 4 */
  readonly toolConcurrency?: number;
}

export interface CreateSessionOptions {
  /** @defaultValue a fresh id from the runtime's id source */
  readonly sessionId?: string;
  /** @defaultValue 'ordinary' */
  readonly kind?: SessionKind;
  readonly parentSession?: string;
  readonly systemPrompt?: AgentOptions['systemPrompt'];
}

export interface Runtime {
  /** A new session stream (first event `session/created`) and the Agent bound to it. */
  createSession(options?: CreateSessionOptions): Agent;
  readonly store: EventStore;
}

/** The effectful shell: binds the pure core to a store, a model, tools, a clock and an id source. */
export const createRuntime = (options: RuntimeOptions): Runtime => {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? consoleLogger;
  return {
    store: options.store,
    createSession(opts = {}) {
      const sessionId = opts.sessionId ?? ids.next();
      const log = new SessionLog({
        store: options.store,
        stream: sessionId,
        clock,
        ids,
        logger,
        ...(options.writeBatchDelayMs !== undefined ? { writeBatchDelayMs: options.writeBatchDelayMs } : {}),
      });
      log.append('session/created', {
        sessionId,
        createdAt: clock.now(),
        kind: opts.kind ?? 'ordinary',
        ...(opts.parentSession ? { parentSession: opts.parentSession } : {}),
      });
      return new Agent(sessionId, {
        log,
        model: options.model,
        logger,
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.toolConcurrency !== undefined ? { toolConcurrency: options.toolConcurrency } : {}),
        ...(opts.systemPrompt !== undefined ? { systemPrompt: opts.systemPrompt } : {}),
      });
    },
  };
};
