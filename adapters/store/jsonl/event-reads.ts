import { join } from 'node:path';
import {
  globalPosition,
  streamRevision,
  type ReadAllOptions,
  type RecordedEvent,
} from '../../../runtime/ports/event-store.js';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readExactly, readIndexRecords, viewIndex } from './global-index.js';
import { decodeLine, type IndexRecord, type StoredEvent } from './line-codec.js';
import { streamOfFile } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';

/**
 * The all-streams read path: no lock. Readers read the global index only up to its committed prefix (the stream
 * reads are in stream-reads.ts).
 */

const READ_ALL_PAGE = 512;

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

/**
 * A stored event as the port's deep-frozen recorded event of `stream`. Its `data` and `metadata` come fresh from
 * `JSON.parse` (no cycle, nothing frozen yet, nothing shared), so they are frozen without the general `deepFreeze`'s
 * checks.
 */
export const recordedEvent = (stream: string, e: StoredEvent): RecordedEvent => {
  const recorded: { -readonly [K in keyof RecordedEvent]: RecordedEvent[K] } = {
    stream,
    revision: streamRevision(e.rev),
    position: globalPosition(e.pos),
    id: e.id,
    type: e.type,
    time: e.time,
    data: freezeParsed(e.data),
  };
  if (e.ignorable) recorded.ignorable = true;
  if (e.metadata !== undefined) recorded.metadata = freezeParsed(e.metadata);
  if (e.hash !== undefined) recorded.hash = e.hash;
  return Object.freeze(recorded);
};

/** Deep-freezes a value fresh from `JSON.parse`: plain objects and arrays, no cycle. */
const freezeParsed = <T>(value: T): T => {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeParsed(value[i]);
  } else {
    for (const key of Object.keys(value)) freezeParsed((value as Record<string, unknown>)[key]);
  }
  return Object.freeze(value);
};
