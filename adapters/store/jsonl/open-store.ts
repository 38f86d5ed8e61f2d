import { join } from 'node:path';
import { StoreCorruptError, StoreError, StoreIoError } from '../../../runtime/ports/store-errors.js';
// the error alone (runtime/arguments.js would bring the event schemas into the store's module graph)
import { RuntimeError } from '../../../runtime/errors.js';
import { DirectoryLock } from './dir-lock.js';
import { hashOfFileName } from './file-name.js';
import { isErrnoCode, nodeFsOps, type FileOps, type FsOps } from './fs-ops.js';
import { INDEX_FILE } from './global-index.js';
import { JOURNAL_FILE } from './group-journal.js';
import { JsonlEventStore } from './jsonl-event-store.js';
import { STREAMS_DIR } from './store-directory.js';
import type { JsonlEventStoreOptions } from './store-options.js';

/**
 * Opens (creating if needed) a JSONL event store in `dir`, repairing what a crash left behind; with
 * `readOnly: true`, opens an existing store without writing anything.
 */
export const openJsonlEventStore = async (dir: string, options: JsonlEventStoreOptions = {}): Promise<JsonlEventStore> => {
  const fs = options.fs ?? nodeFsOps;
  const sliceMs = options.commitSliceMs;
  if (sliceMs !== undefined && (typeof sliceMs !== 'number' || !(sliceMs >= 0))) throw new RuntimeError('invalid-argument', 'openJsonlEventStore(options.commitSliceMs): expected a number of milliseconds ≥ 0');
  if (options.readOnly) return openReadOnly(dir, fs, options);
  try {
    await fs.mkdir(join(dir, STREAMS_DIR));
  } catch (e) {
    throw new StoreIoError('open', { cause: e });
  }
  const lock = new DirectoryLock(dir, { ...(options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs }), ...(options.lockFs ? { fs: options.lockFs } : {}) });
  try {
    await lock.acquire();
    const indexPath = join(dir, INDEX_FILE);
    if ((await fs.sizeOf(indexPath)) === undefined && (await fs.readdir(join(dir, STREAMS_DIR))).some((n) => hashOfFileName(n) !== undefined)) {
      // Without the index every line would look uncommitted and be cut: refuse instead.
      throw new StoreCorruptError(indexPath, 0, 'the global index is missing but stream files exist');
    }
    let created = false;
    for (const path of [indexPath, join(dir, JOURNAL_FILE)]) {
      try {
        const h = await fs.open(path, 'create');
        await h.close();
        created = true;
      } catch (e) {
        if (!isErrnoCode(e, 'EEXIST')) throw new StoreIoError('open', { cause: e });
      }
    }
    if (created && options.durability !== 'none') {
      await fs.syncDir(dir);
      await fs.syncDir(join(dir, STREAMS_DIR));
    }
    const indexWrite = await fs.open(indexPath, 'update');
    const indexRead = await fs.open(indexPath, 'read');
    const journal = await fs.open(join(dir, JOURNAL_FILE), 'update');
    const store = new JsonlEventStore(dir, fs, lock, { indexWrite, indexRead, journal }, options);
    try {
      await store.recoverAll();
    } catch (e) {
      await store.close().catch(() => {});
      throw e;
    }
    try {
      lock.release();
    } catch (e) {
      // a full disk can refuse even the lock's "released" line: report it (store-io), never hand out the store
      await store.close().catch(() => {});
      throw e;
    }
    return store;
  } catch (e) {
    try {
      lock.dispose();
    } catch {
      // the failure being reported is the first one
    }
    throw e instanceof StoreError ? e : new StoreIoError('open', { cause: e });
  }
};

const openReadOnly = async (dir: string, fs: FsOps, options: JsonlEventStoreOptions): Promise<JsonlEventStore> => {
  const indexPath = join(dir, INDEX_FILE);
  let indexRead: FileOps;
  try {
    indexRead = await fs.open(indexPath, 'read');
  } catch (e) {
    if (!isErrnoCode(e, 'ENOENT')) throw new StoreIoError('open', { cause: e });
    const streams = await fs.readdir(join(dir, STREAMS_DIR)).catch(() => [] as string[]);
    if (streams.some((n) => hashOfFileName(n) !== undefined)) throw new StoreCorruptError(indexPath, 0, 'the global index is missing but stream files exist');
    throw new StoreIoError('open', { cause: new Error(`no JSONL store in ${dir} (${indexPath} does not exist)`) });
  }
  const store = new JsonlEventStore(dir, fs, undefined, { indexWrite: indexRead, indexRead, journal: indexRead }, options);
  try {
    await store.recoverAll();
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
};
