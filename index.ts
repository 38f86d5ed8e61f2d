export * from './domain/brand.js';
export * from './domain/json.js';
export * from './runtime/ports/event-store.js';
export * from './runtime/ports/store-errors.js';
export { MemoryEventStore, type MemoryEventStoreOptions } from './adapters/store/memory/memory-event-store.js';
