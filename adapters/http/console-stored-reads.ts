import type { LogEvent } from '../../domain/events.js';
import { createKeyring, openEnvelopeNow } from '../../runtime/content-opener.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';

/** A stored session's events as the console's reads share them (see {@link createStoredReads}). */
export interface StoredReads {
  /** Every stored event of the session (seq = stream revision); empty: no such session. */
  (sessionId: string): Promise<readonly LogEvent[]>;
  /**
   * The session's stored events from index `from` on: through the shared read when one is under way (awaited, not
   * repeated), when the events before `from` are held, or from the start; else read from the store from `from`
   * (and not held).
   */
  since(sessionId: string, from: number): Promise<readonly LogEvent[]>;
}

/**
 * A stored session's events as read (seq = stream revision), unfolded: the audit validates and folds them itself,
 * and stops at the first event it refuses, so an invalid log is reported rather than refused. The log is
 * append-only, so the events already read are kept (for `keep` sessions) and only later ones are read again.
 * `open`: sealed content opened with the data keys (as `audit` shows it: text, `[erased]` or `[encrypted]`), else
 * the envelopes as stored (what the hash chain covers). Requests that arrive while a session is being read share
 * that read (the audit view asks for the audit, the timeline and the sessions list's overview of a session at once:
 * one read of a long log, not three).
 */
export const createStoredReads = (store: EventStore, keys: KeyStore | null, open: boolean, keep = 4): StoredReads => {
  const cache = new Map<string, LogEvent[]>();
  const reading = new Map<string, Promise<readonly LogEvent[]>>();
  const readFrom = async (sessionId: string, from: number): Promise<LogEvent[]> => {
    const out: LogEvent[] = [];
    const keyring = open && keys ? createKeyring(keys) : null;
    for await (const r of store.read(sessionId, { from: BigInt(from) })) {
      // with its metadata: the audit shows who did what (metadata.actor)
      const raw = envelopeOfRecorded(r);
      out.push((keyring ? await openEnvelopeNow(raw, keyring) : raw) as LogEvent);
    }
    return out;
  };
  const read = async (sessionId: string): Promise<readonly LogEvent[]> => {
    const held = cache.get(sessionId) ?? [];
    cache.delete(sessionId);
    const out = [...held, ...(await readFrom(sessionId, held.length))];
    cache.set(sessionId, out);
    while (cache.size > keep) cache.delete(cache.keys().next().value!);
    return out;
  };
  const reads = (sessionId: string): Promise<readonly LogEvent[]> => {
    const running = reading.get(sessionId);
    if (running) return running;
    const next = read(sessionId).finally(() => reading.delete(sessionId));
    reading.set(sessionId, next);
    return next;
  };
  reads.since = async (sessionId: string, from: number): Promise<readonly LogEvent[]> => {
    // a read under way, events held, or a read from the start: the shared read (which holds what it read)
    if (reading.has(sessionId) || from === 0 || cache.has(sessionId)) return (await reads(sessionId)).slice(from);
    return readFrom(sessionId, from);
  };
  return reads;
};
