import type { RecordedEvent } from '../../../../../runtime/ports/event-store.js';
import { compareCatalogRows, type CatalogedSession } from '../../../../../runtime/ports/session-catalog.js';
import type { EventStore } from '../../../../../runtime/ports/event-store.js';
import type { SessionCatalogSource } from '../../../../../runtime/ports/session-catalog.js';

/** The oracle: each stream's row, folded from its events as docs/store-jsonl.md describes the catalog. */
export const expectedRows = (events: readonly RecordedEvent[]): CatalogedSession[] => {
  const rows = new Map<string, CatalogedSession>();
  for (const e of events) {
    const before = rows.get(e.stream);
    const d = e.data as { createdAt?: number; kind?: string; parentSession?: string };
    const created =
      e.revision === 0n
        ? e.type === 'session/created'
          ? { createdAt: d.createdAt!, kind: d.kind ?? null, ...(d.parentSession ? { parentSession: d.parentSession } : {}) }
          : { createdAt: e.time, kind: null }
        : { createdAt: before!.createdAt, kind: before!.kind, ...(before!.parentSession ? { parentSession: before!.parentSession } : {}) };
    const open = e.type === 'turn/start' ? true : e.type === 'turn/end' ? false : before?.status === 'open-turn';
    rows.set(e.stream, { sessionId: e.stream, ...created, lastSeq: Number(e.revision), lastActivity: e.time, status: open ? 'open-turn' : 'idle', chainHead: e.hash ?? null });
  }
  return [...rows.values()].sort(compareCatalogRows);
};


/** Throws unless the store's session catalog equals {@link expectedRows} of its `readAll`. */
export const assertCatalogIsFold = async (store: EventStore & SessionCatalogSource): Promise<void> => {
  const all: RecordedEvent[] = [];
  for await (const e of store.readAll()) all.push(e);
  const expected = expectedRows(all);
  const got = (await store.listSessions()).sessions;
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Error(`the session catalog differs from a fold of the store: ${JSON.stringify(got).slice(0, 400)} vs ${JSON.stringify(expected).slice(0, 400)}`);
  }
};
