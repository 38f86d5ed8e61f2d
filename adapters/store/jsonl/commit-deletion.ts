import { rm } from 'node:fs/promises';
import { snapshotFileOf } from './fold-snapshot-files.js';
import { join } from 'node:path';
import type { StreamRevision } from '../../../runtime/ports/event-store.js';
import { streamRevision } from '../../../runtime/ports/event-store.js';
import { isStoreError, StoreIoError, StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import { concurrencyError } from '../../../runtime/ports/store-validation.js';
import type { CommitContext } from './commit-appends.js';
import { DELETIONS_FILE, encodeDeletion } from './deletions.js';
import { isErrnoCode } from './fs-ops.js';
import { io, type StoreDirectory } from './store-directory.js';
import { recoverIndex, writerState } from './writer-state.js';

/** One deleteStream call waiting in the commit queue (deletions are serialized with the appends). */
export interface PendingDeletion {
  readonly kind: 'delete';
  readonly stream: string;
  readonly expected: StreamRevision;
  readonly time: number;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** Appends one line to the deletion log and fsyncs it (and the directory when the log is new): the commit point. */
const logDeletion = async (directory: StoreDirectory, line: Buffer): Promise<void> => {
  const path = join(directory.dir, DELETIONS_FILE);
  const deletions = await directory.refreshDeletions();
  let created = false;
  let file;
  try {
    file = await directory.fs.open(path, 'create');
    created = true;
  } catch (e) {
    if (!isErrnoCode(e, 'EEXIST')) throw e;
    file = await directory.fs.open(path, 'update');
  }
  try {
    // a torn last line is a deletion that never happened: keep its bytes in the quarantine, then write over it
    if (deletions.size > deletions.validEnd) await directory.cut(file, path, deletions.validEnd, 'a torn last line of the deletion log: a deletion that never committed', 'deleteStream');
    try {
      await file.write(line, deletions.validEnd);
      await file.sync();
      if (created) await directory.fs.syncDir(directory.dir);
    } catch (e) {
      // not durable: undo, so that the deletion did not happen (a failed rollback leaves a line a reader may
      // believe: then the stream reads as deleted, and the archive that asked for it holds it)
      await file.truncate(deletions.validEnd).then(() => file.sync()).catch(() => undefined);
      throw e;
    }
  } finally {
    await file.close();
  }
};

/**
 * Deletes one stream under the directory lock:
 * 1. checkpoints the group journal (so no journal replay ever writes into the file being removed);
 * 2. checks the stream's committed revision against `expected` and that it was not deleted before;
 * 3. appends its line to the deletion log and fsyncs it — from here on the stream is deleted;
 * 4. removes the stream file and fsyncs the streams directory. If this step fails (or the process dies), the
 *    next writable open removes the file; readers already skip it.
 * A failure before step 3 completes deletes nothing (StoreIoError).
 */
export const commitDeletion = async ({ directory, cache, lock, notifier }: CommitContext, item: PendingDeletion): Promise<void> => {
  try {
    await lock.acquire();
  } catch (e) {
    item.reject(e);
    return;
  }
  let logged = false;
  try {
    await io('deleteStream', () => directory.checkpoint());
    const index = await recoverIndex(directory);
    const { hash, path } = directory.names(item.stream);
    await io('deleteStream', () => directory.refreshDeletions());
    if (directory.isDeleted(hash)) throw new StreamDeletedError(item.stream);
    const state = await writerState(directory, cache, item.stream, index);
    const actual = state.lastRevision < 0 ? 'no_stream' : streamRevision(state.lastRevision);
    if (actual !== item.expected) throw concurrencyError(item.stream, item.expected, actual);
    await io('deleteStream', () => logDeletion(directory, encodeDeletion({ stream: item.stream, hash, revision: state.lastRevision, time: item.time })));
    logged = true;
    await io('deleteStream', () => directory.refreshDeletions());
    cache.states.delete(item.stream);
    cache.readHints.delete(item.stream);
    await directory.dropWriteHandle(path);
    await directory.fs.unlink(path).then(
      () => (directory.durability === 'none' ? undefined : directory.fs.syncDir(directory.streamsDir)),
      () => undefined, // the deletion is committed: a writable open removes the file
    );
    // its fold snapshots (a cache, node:fs beside the store's file system: fold-snapshot-files.ts) go with it
    await rm(snapshotFileOf(directory.dir, hash), { force: true }).catch(() => undefined);
    item.resolve();
  } catch (e) {
    if (logged) item.resolve();
    else item.reject(isStoreError(e) ? e : new StoreIoError('deleteStream', { cause: e }));
  } finally {
    try {
      lock.release();
    } catch {
      // as in commitAppends: the lock's "released" line is not the deletion
    }
    await directory.trimWriteHandles();
  }
  notifier.notify();
};
