import type { LogEvent } from '../domain/events.js';
import type { Agent } from '../runtime/agent.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { readStreamPages } from '../runtime/ports/paged-reads.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import { arrayLogSource, type AuditLogSource } from './session-audit.js';

/**
 * The sources the console's audit reads a session's log from, by seq (host/session-audit.ts,
 * `SessionAuditCache.auditLog`): a range of events, never the whole log held at once.
 */

/** Reads `[from, to)` of a stored session, the envelopes as stored (what the hash chain covers), a store page at a time. */
async function* storedRange(store: EventStore, sessionId: string, from: number, to: number): AsyncGenerator<readonly LogEvent[]> {
  if (to <= from) return;
  for await (const page of readStreamPages(store, sessionId, { from: BigInt(from), maxCount: to - from })) {
    // with its metadata: the audit shows who did what (metadata.actor)
    yield page.map((r) => envelopeOfRecorded(r) as LogEvent);
  }
}

/**
 * A stored session's log as the store holds it (durable), read by range; null when the store has no such session.
 * The length is the store's revision when asked: events appended after it are not part of this source.
 */
export const storedAuditLog = async (store: EventStore, sessionId: string): Promise<AuditLogSource | null> => {
  const revision = await store.revision(sessionId);
  if (revision === 'no_stream') return null;
  return { lastSeq: Number(revision), read: (from, to) => storedRange(store, sessionId, from, to) };
};

/**
 * A live session's whole log by range: the events before its agent's window (`agent.base`) from the store, where
 * they are durable, then the agent's own events (stored form: the caller uses it only when the host seals nothing).
 */
export const liveAuditLog = (store: EventStore, agent: Agent): AuditLogSource => {
  const base = agent.base;
  const held = arrayLogSource(agent.events, base);
  return {
    lastSeq: held.lastSeq,
    async *read(from, to) {
      if (from < base) yield* storedRange(store, agent.sessionId, from, Math.min(to, held.lastSeq + 1, base));
      yield* held.read(from, to);
    },
  };
};
