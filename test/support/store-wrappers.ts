import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * The store's required port methods bound to it, without its optional paged reads: what a store that has neither
 * `readPages` nor `readAllPages` offers. Tests add back (or replace) the optional ones they want.
 */
export const requiredPortOf = (store: EventStore): EventStore => ({
  maxEventBytes: store.maxEventBytes,
  append: (...a) => store.append(...a),
  read: (...a) => store.read(...a),
  subscribe: (...a) => store.subscribe(...a),
  readAll: (...a) => store.readAll(...a),
  subscribeAll: (...a) => store.subscribeAll(...a),
  revision: (...a) => store.revision(...a),
  close: () => store.close(),
});
