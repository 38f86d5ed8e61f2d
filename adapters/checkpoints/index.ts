export * from './memory-checkpoint-store.js';
export * from './file-checkpoint-store.js';
export * from './postgres-checkpoint-store.js';
