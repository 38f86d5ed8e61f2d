import type { LogEvent } from '../../domain/events.js';
import { createKeyring, openEnvelopeNow } from '../../runtime/content-opener.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { KeyStore } from '../../runtime/ports/key-store.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { readStreamPages } from '../../runtime/ports/paged-reads.js';

/**
 * Work that goes before the console's long reads: while any runs, the long reads ({@link createStoredReads}, the
 * sessions overview's fold) pause between pages, so a short answer (a cached timeline being checked against the
 * store) is not held up behind a read of a whole log on the same thread.
 */
export interface ReadPriority {
  /** Runs `work` ahead of the long reads. */
  first<T>(work: () => Promise<T>): Promise<T>;
  /** Resolves at once when nothing runs first, else when it is done (a long read awaits it between pages). */
  turn(): Promise<void>;
}

/** A {@link ReadPriority}. */
export const createReadPriority = (): ReadPriority => {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    first: async (work) => {
      running++;
      try {
        return await work();
      } finally {
        if (--running === 0) for (const w of waiting.splice(0)) w();
      }
    },
    turn: () => (running === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
  };
};

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
  /** The shared read of the session when one is under way or its events are held (not started otherwise). */
  held(sessionId: string): Promise<readonly LogEvent[]> | undefined;
}

/**
 * A stored session's events as read (seq = stream revision), unfolded: the audit validates and folds them itself,
 * and stops at the first event it refuses, so an invalid log is reported rather than refused. The log is
 * append-only, so the events already read are kept (for `keep` sessions) and only later ones are read again.
 * `open`: sealed content opened with the data keys (as `audit` shows it: text, `[erased]` or `[encrypted]`), else
 * the envelopes as stored (what the hash chain covers). Requests that arrive while a session is being read share
 * that read (the audit view asks for the audit, the timeline and the sessions list's overview of a session at once:
 * one read of a long log, not three). With `priority`, a read pauses between its pages (the store's) while work that goes first runs.
 */
export const createStoredReads = (store: EventStore, keys: KeyStore | null, open: boolean, options: { readonly keep?: number; readonly priority?: ReadPriority } = {}): StoredReads => {
  const keep = options.keep ?? 4;
  const priority = options.priority ?? null;
  const cache = new Map<string, LogEvent[]>();
  const reading = new Map<string, Promise<readonly LogEvent[]>>();
  const readFrom = async (sessionId: string, from: number): Promise<LogEvent[]> => {
    const out: LogEvent[] = [];
    const keyring = open && keys ? createKeyring(keys) : null;
    // a page at a time (the store's own pages: for a JSONL store, the lines one file read completes), not an await per event
    for await (const page of readStreamPages(store, sessionId, { from: BigInt(from) })) {
      for (const r of page) {
        // with its metadata: the audit shows who did what (metadata.actor)
        const raw = envelopeOfRecorded(r);
        out.push((keyring ? await openEnvelopeNow(raw, keyring) : raw) as LogEvent);
      }
      if (priority) await priority.turn();
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
  reads.held = (sessionId: string): Promise<readonly LogEvent[]> | undefined => (reading.has(sessionId) || cache.has(sessionId) ? reads(sessionId) : undefined);
  return reads;
};
