import type { DerivedCacheSource } from '../../runtime/ports/derived-cache.js';
import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * The derived caches a store keeps beside its streams: a JSONL store's `derived/` (`jsonlDerivedCache`); null for
 * the other stores (their readers derive from the log after every restart).
 */
export const derivedCacheOf = async (store: EventStore): Promise<DerivedCacheSource | null> => {
  const [{ JsonlEventStore }, { jsonlDerivedCache }] = await Promise.all([import('./jsonl/jsonl-event-store.js'), import('./jsonl/derived-cache-files.js')]);
  return store instanceof JsonlEventStore ? jsonlDerivedCache(store.directory) : null;
};
