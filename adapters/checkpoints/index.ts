/**
 * The checkpoint stores that need no driver. The PostgreSQL checkpoint store is exported by `steerlog/postgres`
 * only (adapters/store/postgres/index.ts), so that nothing reached from here loads `pg`.
 */
export * from './memory-checkpoint-store.js';
export * from './file-checkpoint-store.js';
export * from './file-projection-store.js';
