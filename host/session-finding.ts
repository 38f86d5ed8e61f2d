import { sessionLineage, type SessionLineage } from '../audit/session-lineage.js';
import { searchSessions, type SearchQuery, type SearchResult } from '../audit/session-search.js';
import { createKeyring } from '../runtime/content-opener.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';

/**
 * Finding sessions from a host: the full-text search and the lineage of forks and children over the host's store,
 * the same use cases `steerlog search` and `steerlog lineage` run (so the console's answers are the commands'
 * answers). Sealed content is searched with `keys` (null: not searched, and counted as such).
 */

/** `steerlog search --json`'s answer over `store` (its text index on PostgreSQL, else the streaming scan). */
export const searchHostSessions = (store: EventStore, keys: KeyStore | null, query: SearchQuery): Promise<SearchResult> =>
  searchSessions(store, query, keys ? createKeyring(keys) : null);

/** `steerlog lineage --json`'s answer over `store`; throws `LineageSessionNotFoundError` for an unknown session. */
export const hostSessionLineage = (store: EventStore, session: string): Promise<SessionLineage> => sessionLineage(store, session);
