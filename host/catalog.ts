import type { SessionCreatedData } from '../domain/events.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { readAllPages } from '../runtime/ports/paged-reads.js';
import { catalogPageOf, hasSessionCatalog, type CatalogedSession, type CatalogOrder, type SessionCatalogSource } from '../runtime/ports/session-catalog.js';

/** What the catalog knows of a session: its `session/created` data. */
export type CatalogEntry = Pick<SessionCreatedData, 'sessionId' | 'kind' | 'createdAt' | 'parentSession'>;

/** A listed session: its `session/created` data, and where its log ends when the store's catalog says so. */
export interface CatalogListRow extends CatalogEntry {
  readonly lastSeq?: number;
  readonly lastActivity?: number;
  /** A read of the session's log found damage (the store's catalog, or a read on this host). */
  readonly broken?: true;
}

/** Filters and paging of {@link SessionCatalog.page}. */
export interface CatalogListQuery {
  /** The `next` cursor of the previous page (asked in the same `order`). @defaultValue from the first of the order */
  readonly after?: string | undefined;
  /** Oldest first (by `createdAt`, then id) or newest first (the reverse). @defaultValue 'oldest' */
  readonly order?: CatalogOrder | undefined;
  /** @defaultValue every session */
  readonly limit?: number | undefined;
  readonly kind?: string | undefined;
  readonly parentSession?: string | undefined;
}

/**
 * Every session in the store. When the store keeps a session catalog (SessionCatalogSource: the JSONL and PostgreSQL stores), a page
 * is read from it, so a list costs the page; otherwise sessions are found by following the store's global order
 * for `session/created` events at seq 0, each refresh reading only what was committed since the last one, so
 * sessions another host created appear too.
 */
export class SessionCatalog {
  readonly #store: EventStore;
  readonly #source: SessionCatalogSource | undefined;
  readonly #entries = new Map<string, CatalogEntry>();
  readonly #broken = new Set<string>();
  #after: bigint | undefined;
  #refreshing: Promise<void> | null = null;

  constructor(store: EventStore) {
    this.#store = store;
    this.#source = hasSessionCatalog(store) ? store : undefined;
  }

  /** Reads the global order since the last refresh (concurrent callers share one read); nothing with a store catalog. */
  refresh(): Promise<void> {
    if (this.#source) return Promise.resolve();
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

  /** Records that a read of the session's log on this host found damage: it is listed `broken` from now on. */
  markBroken(sessionId: string): void {
    this.#broken.add(sessionId);
  }

  /** The session's entry: noted here, else its first event in the store (with a store catalog), else after a refresh. */
  async lookup(sessionId: string): Promise<CatalogEntry | undefined> {
    const noted = this.#entries.get(sessionId);
    if (noted || !this.#source) {
      if (!noted) await this.refresh();
      return this.#entries.get(sessionId);
    }
    for await (const e of this.#store.read(sessionId, { maxCount: 1 })) {
      if (e.type === 'session/created' && e.revision === 0n) this.note(e.data as SessionCreatedData);
    }
    return this.#entries.get(sessionId);
  }

  /** A page of sessions in `query.order` (oldest first by default), filtered; `next` resumes after it in that order (null after the last). */
  async page(query: CatalogListQuery = {}): Promise<{ readonly rows: CatalogListRow[]; readonly next: string | null }> {
    const q = {
      ...(query.after !== undefined ? { after: query.after } : {}),
      ...(query.order !== undefined ? { order: query.order } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
      ...(query.kind !== undefined ? { kind: query.kind } : {}),
      ...(query.parentSession !== undefined ? { parentSession: query.parentSession } : {}),
    };
    if (this.#source) {
      const page = await this.#source.listSessions({ ...q, sessionsOnly: true });
      return { rows: page.sessions.map((r) => this.#rowOf(r)), next: page.next };
    }
    await this.refresh();
    const rows = [...this.#entries.values()].map((e): CatalogedSession => ({ ...e, lastSeq: -1, lastActivity: e.createdAt, status: 'idle', chainHead: null }));
    const page = catalogPageOf(rows, q);
    return { rows: page.sessions.map((r) => this.#entryRow(this.#entries.get(r.sessionId)!)), next: page.next };
  }

  #rowOf(r: CatalogedSession): CatalogListRow {
    return {
      sessionId: r.sessionId,
      kind: (r.kind ?? 'unknown') as CatalogEntry['kind'], // a broken stream's first line may be unreadable
      createdAt: r.createdAt,
      ...(r.parentSession !== undefined ? { parentSession: r.parentSession } : {}),
      lastSeq: r.lastSeq,
      lastActivity: r.lastActivity,
      ...(r.status === 'broken' || this.#broken.has(r.sessionId) ? { broken: true as const } : {}),
    };
  }

  #entryRow(e: CatalogEntry): CatalogListRow {
    return this.#broken.has(e.sessionId) ? { ...e, broken: true } : e;
  }

  get(sessionId: string): CatalogEntry | undefined {
    return this.#entries.get(sessionId);
  }
  /** Every known session, oldest first (those this host noted or, without a store catalog, refreshed). */
  list(): CatalogEntry[] {
    return [...this.#entries.values()].sort((a, b) => a.createdAt - b.createdAt || (a.sessionId < b.sessionId ? -1 : 1));
  }
}
