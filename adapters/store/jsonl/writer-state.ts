import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { readExactly, readIndexRecords, viewIndex, type IndexView } from './global-index.js';
import { IdRevisions } from './id-revisions.js';
import { assertCrashTail } from './index-survey.js';
import { decodeLineAt, INDEX_RECORD_BYTES } from './line-codec.js';
import { headerOf, scanCommitted, type IndexLookup } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache, StreamState } from './stream-cache.js';

/**
 * What the lock holder sees before it writes: the committed index, and each stream's committed state, caught up
 * with what other writers committed and cut back where a crashed writer left uncommitted bytes.
 */

/** The committed index, as the lock holder recovered it (whether another writer committed since is kept on the directory, `foreignCommitAt`). */
export type WriterIndex = IndexLookup;

/** Under the lock: the committed prefix of the index, cutting an unfinished batch a crashed writer left. */
export const recoverIndex = async (directory: StoreDirectory): Promise<WriterIndex> => {
  const size = await io('append', () => directory.indexWrite.size());
  // Unchanged since our last commit: no other writer committed (or crashed half-way through its index write).
  const unchanged = size === directory.lastIndexSize && size % INDEX_RECORD_BYTES === 0;
  const view: IndexView = unchanged ? { count: size / INDEX_RECORD_BYTES, size } : await io('append', () => viewIndex(directory.indexWrite, directory.indexPath));
  if (view.size !== view.count * INDEX_RECORD_BYTES) {
    await io('recovery', () => assertCrashTail(directory.indexWrite, directory.indexPath, view));
    await directory.cut(directory.indexWrite, directory.indexPath, view.count * INDEX_RECORD_BYTES, `index records after the last commit mark (position ${view.count}): an unfinished commit`, 'recovery');
  }
  // Someone else committed since our last commit (or this is our first): every cached stream state is suspect.
  if (!unchanged) directory.foreignCommitAt = view.count;
  directory.lastIndexSize = view.count * INDEX_RECORD_BYTES;
  return { file: directory.indexRead, path: directory.indexPath, view };
};

/** Under the lock: the stream's committed state, loading it or catching up with other writers, cutting leftovers. */
export const writerState = async (directory: StoreDirectory, cache: StreamCache, stream: string, index: WriterIndex): Promise<StreamState> => {
  let state = cache.states.get(stream);
  // Known current since the last commit another writer made, so as we left it. (Not merely "nobody committed since
  // our last commit": that commit may have gone to other streams, after another writer committed to this one.
  // A crashed writer's uncommitted lines past its end would be overwritten by ours or cut by the next refresh.)
  if (state?.exists && state.validAt >= directory.foreignCommitAt) return state;
  if (!state) {
    const { hash, fileName, path } = directory.names(stream);
    state = { stream, hash, fileName, path, exists: false, size: 0, headerEnd: 0, lastRevision: -1, positions: [], ids: new IdRevisions(), validAt: -1 };
  }
  const size = await io('append', () => directory.fs.sizeOf(state.path));
  if (size === undefined) {
    if (state.exists) throw new StoreCorruptError(state.fileName, 0, 'stream file disappeared');
    await assertIndexed(directory, cache, state, index);
    cache.states.set(stream, state);
    return state;
  }
  if (state.exists && size === state.size) {
    state.validAt = index.view.count;
    return state;
  }
  if (state.exists && size < state.size) throw new StoreCorruptError(state.fileName, size, `file shrank below its committed length ${state.size}`);
  const file = await io('append', () => directory.writeHandle(state.path));
  {
    let start = state.size;
    if (!state.exists) {
      start = await headerOf(file, state.fileName, stream);
      state.headerEnd = start;
    }
    const scan = await scanCommitted(file, state.fileName, start, size, state.lastRevision, state.positions.at(-1) ?? -1, state.hash, index);
    for (const e of scan.entries) {
      state.positions.push(e.event.pos);
      state.ids.set(e.event.id, e.event.rev);
      state.lastRevision = e.event.rev;
    }
    state.exists = true;
    state.size = scan.end;
    state.validAt = index.view.count;
    await assertIndexed(directory, cache, state, index);
    if (scan.end < size) await directory.cut(file, state.path, scan.end, `uncommitted lines after the last committed one (the index holds ${index.view.count} records): an unfinished commit`, 'append');
  }
  cache.states.set(stream, state);
  return state;
};
/**
 * Under the lock, before anything is written to a stream whose state was just read from its file: the file must
 * hold every revision the committed index holds for it (IndexRevisions), else StoreCorruptError and nothing is
 * written or cut. Opening checks only the files the last commit touched; this covers the others. A shortfall is
 * confirmed with a fresh scan first (a concurrent reader of this instance may have scanned records that a failed
 * append then rolled back).
 */
const assertIndexed = async (directory: StoreDirectory, cache: StreamCache, state: StreamState, index: WriterIndex): Promise<void> => {
  const revisions = cache.indexRevisions;
  const found = state.exists ? state.lastRevision : -1;
  for (let confirming = false; ; confirming = true) {
    await io('append', () => revisions.upTo(index.file, index.path, index.view.count));
    const indexed = revisions.of(state.hash);
    if (found >= indexed.revision || indexed.position >= index.view.count) return;
    if (confirming) {
      throw new StoreCorruptError(
        state.fileName,
        state.exists ? state.size : 0,
        state.exists
          ? `the file's committed lines end at revision ${found}, but the index holds revision ${indexed.revision} at global position ${indexed.position}: committed lines are missing`
          : `the stream file is missing, but the index holds its events up to revision ${indexed.revision} (global position ${indexed.position})`,
      );
    }
    await revisions.reset();
  }
};

/**
 * Under the lock: the revisions of a stream's committed part that hold any of `ids` (an append's ids, checked for
 * idempotency), read back from the file. The state keeps only a hash of each id (id-revisions.ts): each candidate
 * revision's line is found through its index record and its id compared; a record or line that does not check is
 * StoreCorruptError (a committed line is read).
 */
export const storedRevisions = async (directory: StoreDirectory, state: StreamState, index: WriterIndex, ids: readonly string[]): Promise<Map<string, number>> => {
  const found = new Map<string, number>();
  for (const id of ids) {
    for (const rev of state.ids.candidates(id)) {
      const pos = state.positions[rev];
      if (pos === undefined || pos >= index.view.count) continue;
      const [record] = await io('append', () => readIndexRecords(index.file, index.path, pos, 1));
      if (record!.fileHash !== state.hash) throw new StoreCorruptError(index.path, pos * INDEX_RECORD_BYTES, `the record of global position ${pos} names another stream file than revision ${rev} of ${state.fileName}`);
      const file = await io('append', () => directory.writeHandle(state.path));
      const bytes = await io('append', () => readExactly(file, record!.offset, record!.length, state.path));
      const line = decodeLineAt(bytes, 0, bytes.length);
      if (typeof line === 'string' || line.kind !== 'event' || line.event.rev !== rev) {
        throw new StoreCorruptError(state.fileName, record!.offset, typeof line === 'string' ? line : `expected revision ${rev} at the place its index record names`);
      }
      if (line.event.id === id) found.set(id, rev);
    }
  }
  return found;
};
