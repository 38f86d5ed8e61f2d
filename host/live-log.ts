import type { LogEvent } from '../domain/events.js';
import type { Agent } from '../runtime/agent.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';
import { foldRange } from '../runtime/session-range.js';

/**
 * A live session's whole log when its agent holds only a window of it (resumed from a fold snapshot: `agent.base`
 * above 0): the events before the window read from the store (they are durable), then the window. An agent that
 * holds its whole log answers with it, without a read. O(the log) for a windowed agent: for the reads that need
 * every event (an audit, a fold from seq 0), never for the model's surface or a history page.
 */
export const wholeLiveLog = async (store: EventStore, agent: Agent, keys: KeyStore | null = null): Promise<readonly LogEvent[]> => {
  if (agent.base === 0) return agent.events;
  const before = await foldRange(store, agent.sessionId, { from: 0, to: agent.base }, keys, { keepSteps: false });
  return before.events.concat(agent.events);
};

/**
 * The stored log of a session (`stored`: what the store holds, durable) followed by the live agent's events the
 * store does not hold yet: the whole log of a live session whatever its agent holds in memory.
 */
export const withLiveTail = (stored: readonly LogEvent[], agent: Agent): readonly LogEvent[] => {
  const from = stored.length - agent.base;
  if (from < 0) throw new Error(`the store holds ${stored.length} events of ${agent.sessionId}, fewer than the ${agent.base} its live agent does not hold`);
  return from >= agent.events.length ? stored : stored.concat(agent.events.slice(from));
};
