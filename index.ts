/** steerlog's public API. */
export * from './domain/index.js';
export * from './runtime/ports/event-store.js';
export * from './runtime/ports/store-errors.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './adapters/store/memory/memory-event-store.js';
