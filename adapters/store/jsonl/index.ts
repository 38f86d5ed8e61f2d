export { JsonlEventStore } from './jsonl-event-store.js';
export { openJsonlEventStore } from './open-store.js';
export type { JsonlDurability, JsonlEventStoreOptions } from './store-options.js';
export { nodeFsOps, type FileOps, type FsOps, type OpenMode } from './fs-ops.js';
export { streamFileName } from './file-name.js';
export { checkJsonlStore, type StoreCheckReport, type StoreFinding } from './store-check.js';
export { rebuildJsonlIndex, type RebuildOptions, type RebuildReport } from './rebuild-index.js';
export type { RetiredAttribution, RetiredReport } from './rebuild-retired.js';
export { QUARANTINE_DIR, QUARANTINE_LOG, type QuarantineEntry } from './quarantine.js';
