import { optionalEventFields } from '../../../runtime/ports/recorded-envelope.js';
import { join } from 'node:path';
import { deepFreeze } from '../../../domain/json.js';
import {
  globalPosition,
  streamRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
} from '../../../runtime/ports/event-store.js';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readExactly, readIndexRecords, viewIndex } from './global-index.js';
import { decodeLine, type IndexRecord, type StoredEvent } from './line-codec.js';
import { committedTail, streamOfFile } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';
import { backwardLines, forwardLineBatches } from './stream-file.js';

/**
 * The read path: no lock. Readers stop before a stream file's uncommitted tail and read the global index only up
 * to its committed prefix.
 */

const READ_ALL_PAGE = 512;
/** Bytes a forward stream read takes from the file at a time. */
const READ_CHUNK = 256 * 1024;

/** EventStore.read: a stream's committed events, forwards from a remembered line or backwards from its tail. */
export async function* readStream(directory: StoreDirectory, cache: StreamCache, stream: string, options: ReadStreamOptions): AsyncGenerator<RecordedEvent> {
  directory.assertOpen();
  const { path, fileName, hash } = directory.names(stream);
  await io('read', () => directory.refreshDeletions());
  if (directory.isDeleted(hash)) return;
  const size = await io('read', () => directory.fs.sizeOf(path));
  if (size === undefined) return;
  const file = await io('read', () => directory.fs.open(path, 'read'));
  try {
    const tail = await tailOf(directory, cache, stream, file, fileName, size);
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0 || tail.lastRevision < 0) return;
    let count = 0;
    if ((options.direction ?? 'forwards') === 'forwards') {
      const from = Number(options.from ?? 0n);
      // Committed bytes never change, so a remembered (revision, offset) pair lets a read (a live subscription,
      // typically) start mid-file instead of rescanning from the header.
      const hint = cache.readHints.get(stream);
      const useHint = hint !== undefined && hint.rev <= from && hint.offset <= tail.end;
      let rev = useHint ? hint.rev : 0;
      let line: number | undefined = useHint ? undefined : 1;
      for await (const batch of forwardLineBatches(file, useHint ? hint.offset : tail.headerEnd, tail.end, READ_CHUNK)) {
        for (const raw of batch) {
          if (line !== undefined) line++;
          if (rev >= from) {
            const event = decodeEvent(raw.bytes, fileName, raw.offset, line, rev);
            cache.readHints.set(stream, { rev: rev + 1, offset: raw.offset + raw.bytes.length + 1 });
            yield recordedEvent(stream, event);
            if (++count >= max) return;
          }
          rev++;
        }
      }
    } else {
      const from = options.from === undefined ? tail.lastRevision : Math.min(Number(options.from), tail.lastRevision);
      let rev = tail.lastRevision;
      for await (const raw of backwardLines(file, tail.end)) {
        if (raw.offset < tail.headerEnd) return;
        if (rev <= from) {
          yield recordedEvent(stream, decodeEvent(raw.bytes, fileName, raw.offset, undefined, rev));
          if (++count >= max) return;
        }
        rev--;
      }
    }
  } finally {
    await file.close();
  }
}

/** EventStore.readAll: the global index in pages, one file read per run of contiguous lines. */
export async function* readAllEvents(directory: StoreDirectory, cache: StreamCache, options: ReadAllOptions): AsyncGenerator<RecordedEvent> {
  directory.assertOpen();
  const view = await io('readAll', () => viewIndex(directory.indexRead, directory.indexPath));
  // read after the index view: a stream deleted before the view was taken is skipped (its records are in the view)
  await io('readAll', () => directory.refreshDeletions());
  const max = options.maxCount ?? Number.POSITIVE_INFINITY;
  let p = options.after === undefined ? 0 : Number(options.after) + 1;
  let count = 0;
  const files = new Map<string, FileOps>();
  try {
    while (p < view.count && count < max) {
      const n = Math.min(READ_ALL_PAGE, view.count - p, max - count);
      const records = await readIndexRecords(directory.indexRead, directory.indexPath, p, n);
      let i = 0;
      while (i < records.length) {
        if (directory.isDeleted(records[i]!.fileHash)) {
          i++; // a deleted (archived) stream's record: its position stays taken, its event is gone
          continue;
        }
        // One read for a run of records that are contiguous in the same file (one batch, usually).
        let j = i + 1;
        while (
          j < records.length &&
          records[j]!.fileHash === records[i]!.fileHash &&
          records[j]!.offset === records[j - 1]!.offset + records[j - 1]!.length + 1
        ) {
          j++;
        }
        for (const event of await readRun(directory, cache, files, records.slice(i, j), p + i)) {
          yield event;
          count++;
        }
        i = j;
      }
      p += n;
    }
  } finally {
    for (const f of files.values()) await f.close();
  }
}

/** EventStore.revision: the last committed revision of a stream. */
export const revisionOf = async (directory: StoreDirectory, cache: StreamCache, stream: string): Promise<StreamRevision | 'no_stream'> => {
  directory.assertOpen();
  const { path, fileName, hash } = directory.names(stream);
  await io('revision', () => directory.refreshDeletions());
  if (directory.isDeleted(hash)) return 'no_stream';
  const size = await io('revision', () => directory.fs.sizeOf(path));
  if (size === undefined) return 'no_stream';
  const file = await io('revision', () => directory.fs.open(path, 'read'));
  try {
    const tail = await tailOf(directory, cache, stream, file, fileName, size);
    return tail.lastRevision < 0 ? 'no_stream' : streamRevision(tail.lastRevision);
  } finally {
    await file.close();
  }
};

const tailOf = async (directory: StoreDirectory, cache: StreamCache, stream: string, file: FileOps, fileName: string, size: number): Promise<{ end: number; headerEnd: number; lastRevision: number }> => {
  const state = cache.states.get(stream);
  if (state?.exists && state.size === size) return { end: size, headerEnd: state.headerEnd, lastRevision: state.lastRevision };
  const view = await viewIndex(directory.indexRead, directory.indexPath);
  return committedTail(file, fileName, size, stream, directory.names(stream).hash, { file: directory.indexRead, path: directory.indexPath, view });
};

const readRun = async (directory: StoreDirectory, cache: StreamCache, files: Map<string, FileOps>, run: IndexRecord[], firstPos: number): Promise<RecordedEvent[]> => {
  const hash = run[0]!.fileHash;
  let file = files.get(hash);
  if (!file) {
    if (files.size >= 64) {
      for (const f of files.values()) await f.close();
      files.clear();
    }
    const name = await cache.fileNameOf(hash);
    file = await directory.fs.open(join(directory.streamsDir, name), 'read');
    files.set(hash, file);
  }
  const name = cache.fileOfHash.get(hash)!;
  let stream = cache.streamOfHash.get(hash);
  if (stream === undefined) {
    stream = await streamOfFile(file, name);
    cache.streamOfHash.set(hash, stream);
  }
  const start = run[0]!.offset;
  const last = run[run.length - 1]!;
  const bytes = await readExactly(file, start, last.offset + last.length + 1 - start, name);
  return run.map((r, i) => {
    const line = bytes.subarray(r.offset - start, r.offset - start + r.length);
    const decoded = decodeLine(line);
    if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.crc !== r.lineCrc || decoded.event.pos !== firstPos + i) {
      throw new StoreCorruptError(name, r.offset, typeof decoded === 'string' ? decoded : `line does not match index record ${firstPos + i}`);
    }
    return recordedEvent(stream, decoded.event);
  });
};

const decodeEvent = (bytes: Buffer, fileName: string, offset: number, line: number | undefined, expectedRev: number): StoredEvent => {
  const decoded = decodeLine(bytes);
  if (typeof decoded === 'string') throw new StoreCorruptError(fileName, offset, decoded, line);
  if (decoded.kind !== 'event') throw new StoreCorruptError(fileName, offset, 'unexpected header line', line);
  if (decoded.event.rev !== expectedRev) throw new StoreCorruptError(fileName, offset, `revision ${decoded.event.rev}, expected ${expectedRev}`, line);
  return decoded.event;
};

const recordedEvent = (stream: string, e: StoredEvent): RecordedEvent =>
  deepFreeze({
    stream,
    revision: streamRevision(e.rev),
    position: globalPosition(e.pos),
    id: e.id,
    type: e.type,
    time: e.time,
    data: e.data,
    ...optionalEventFields(e),
  });
