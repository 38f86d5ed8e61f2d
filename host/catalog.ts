import type { SessionCreatedData } from '../domain/events.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';

/** What the catalog knows of a session: its `session/created` data. */
export type CatalogEntry = Pick<SessionCreatedData, 'sessionId' | 'kind' | 'createdAt' | 'parentSession'>;

/**
 * Every session in the store, found by following the store's global order for `session/created` events at seq 0.
 * Each refresh reads only what was committed since the last one, so sessions another host created appear too.
 */
export class SessionCatalog {
  readonly #store: EventStore;
  readonly #entries = new Map<string, CatalogEntry>();
  #after: bigint | undefined;
  #refreshing: Promise<void> | null = null;

  constructor(store: EventStore) {
    this.#store = store;
  }

  /** Reads the global order since the last refresh (concurrent callers share one read). */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        for await (const page of readAllPages(this.#store, this.#after !== undefined ? { after: this.#after } : {})) {
          for (const e of page) {
            this.#after = e.position;
            if (e.type === 'session/created' && e.revision === 0n) this.note(e.data as SessionCreatedData);
          }
        }
      } finally {
        this.#refreshing = null;
      }
    })();
    return this.#refreshing;
  }

  /** Records a session this host just created (before the store has it). */
  note(data: SessionCreatedData): void {
    if (this.#entries.has(data.sessionId)) return;
    this.#entries.set(data.sessionId, {
      sessionId: data.sessionId,
      kind: data.kind,
      createdAt: data.createdAt,
      ...(data.parentSession !== undefined ? { parentSession: data.parentSession } : {}),
    });
  }

  get(sessionId: string): CatalogEntry | undefined {
    return this.#entries.get(sessionId);
  }
  /** Every known session, oldest first. */
  list(): CatalogEntry[] {
    return [...this.#entries.values()].sort((a, b) => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : 1));
  }
}
