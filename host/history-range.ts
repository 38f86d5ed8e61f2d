import { foldRange } from '../runtime/session-range.js';
import { isStoreCorruptError } from '../runtime/ports/store-errors.js';
import { HostError } from './errors.js';
import type { HostRequest, HostResult } from './schemas.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';

/** What a range read of the history needs of the host: its store, the runtime's keys, and the catalog to mark a damaged session. */
export interface HistoryRangePort {
  readonly store: EventStore;
  readonly keyStore: KeyStore | null;
  readonly catalog: { markBroken(sessionId: string): void };
}

/**
 * `session.history` of a session that is not live here, read by range: the page's events and only what the fold
 * needs before them — from the nearest fold snapshot below the page (runtime/session-range.ts), or from seq 0 — never
 * the rest of the log. A page of a long session costs the page and at most one snapshot interval. A page after the
 * last event reads nothing but the stream's last revision.
 */
export const historyFromStore = async (port: HistoryRangePort, request: HostRequest<'session.history'>): Promise<HostResult<'session.history'>> => {
  const sessionId = request.sessionId;
  const after = request.after ?? -1;
  const limit = request.limit ?? 200;
  try {
    const revision = await port.store.revision(sessionId);
    if (revision === 'no_stream') throw new HostError('session-not-found', `no session ${sessionId}`, { sessionId });
    const length = Number(revision) + 1;
    const end = Math.min(length, after + 1 + limit);
    const page: HostResult<'session.history'>['events'] = [];
    if (end > after + 1) {
      const { events, steps } = await foldRange(port.store, sessionId, { from: after + 1, to: end }, port.keyStore);
      events.forEach((event, i) => {
        const messageClass = steps[i]!.messageClass;
        page.push({ event: event as never, ...(messageClass ? { class: messageClass } : {}) });
      });
    }
    return { events: page, lastSeq: length - 1, nextAfter: end < length ? end - 1 : null };
  } catch (e) {
    if (isStoreCorruptError(e) || isStoreCorruptError((e as { cause?: unknown } | null)?.cause)) port.catalog.markBroken(sessionId);
    throw e;
  }
};
