import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { EventStore } from '../../runtime/ports/event-store.js';

/**
 * The store the runtime tests run on. By default a fresh MemoryEventStore per call; the "runtime on postgres"
 * vitest project registers one PostgreSQL store per test file (test/support/postgres-store-setup.ts), so the same
 * scenarios run against a real database.
 */
let shared: EventStore | null = null;
export const useSharedTestStore = (store: EventStore | null): void => {
  shared = store;
};
export const testStore = (): EventStore => shared ?? new MemoryEventStore();
export const testStoreKind = (): string => process.env.STEERLOG_TEST_STORE ?? 'memory';

let n = 0;
/** A session id no other test in this run uses (stores may be shared between tests). */
export const uniqueSessionId = (label = 'session'): string => `${label}-${process.pid}-${Date.now().toString(36)}-${(n++).toString(36)}`;
