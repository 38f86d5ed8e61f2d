export {
  JsonlEventStore,
  openJsonlEventStore,
  type JsonlDurability,
  type JsonlEventStoreOptions,
} from './jsonl-event-store.js';
export { nodeFsOps, type FileOps, type FsOps, type OpenMode } from './fs-ops.js';
export { streamFileName } from './file-name.js';
