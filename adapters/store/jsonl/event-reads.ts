import { join } from 'node:path';
import {
  globalPosition,
  streamRevision,
  type ReadAllOptions,
  type ReadAllPagesOptions,
  type RecordedEvent,
} from '../../../runtime/ports/event-store.js';
import { pageSizeOf } from '../../../runtime/ports/paged-reads.js';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readExactly, readIndexRecords, viewIndex } from './global-index.js';
import { decodeLineAt, type IndexRecord, type StoredEvent } from './line-codec.js';
import { streamOfFile } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';

/**
 * The all-streams read path: no lock. Readers read the global index only up to its committed prefix (the stream
 * reads are in stream-reads.ts).
 */

/** Index records the all-streams read takes at a time: the events of one such read are one page at most. */
const READ_ALL_PAGE = 512;

/** EventStore.readAll: the events of `readAllPages`, one at a time. */
export async function* readAllEvents(directory: StoreDirectory, cache: StreamCache, options: ReadAllOptions): AsyncGenerator<RecordedEvent> {
  for await (const page of readAllPages(directory, cache, options)) yield* page;
}

/**
 * EventStore.readAllPages: the global index in reads of 512 records, one file read per run of contiguous lines; a
 * page is the events of one index read (at most `pageSize`). Every line is checked (checksum, JSON, position) before
 * its page is handed out; a damaged line ends the read with StoreCorruptError after the page of the good events
 * before it, so `readAll` yields exactly what it yields one event at a time.
 */
export async function* readAllPages(directory: StoreDirectory, cache: StreamCache, options: ReadAllPagesOptions): AsyncGenerator<RecordedEvent[]> {
  directory.assertOpen();
  const view = await io('readAll', () => viewIndex(directory.indexRead, directory.indexPath));
  // read after the index view: a stream deleted before the view was taken is skipped (its records are in the view)
  await io('readAll', () => directory.refreshDeletions());
  const max = options.maxCount ?? Number.POSITIVE_INFINITY;
  const pageSize = pageSizeOf(options, Number.POSITIVE_INFINITY);
  let p = options.after === undefined ? 0 : Number(options.after) + 1;
  let count = 0;
  const files = new Map<string, FileOps>();
  try {
    while (p < view.count && count < max) {
      const n = Math.min(READ_ALL_PAGE, view.count - p);
      const records = await readIndexRecords(directory.indexRead, directory.indexPath, p, n);
      let page: RecordedEvent[] = [];
      let failure: unknown;
      let i = 0;
      while (i < records.length && count < max && failure === undefined) {
        if (directory.isDeleted(records[i]!.fileHash)) {
          i++; // a deleted (archived) stream's record: its position stays taken, its event is gone
          continue;
        }
        // One read for a run of records that are contiguous in the same file (one batch, usually), no longer than
        // the events still wanted.
        let j = i + 1;
        while (
          j < records.length &&
          j - i < max - count &&
          records[j]!.fileHash === records[i]!.fileHash &&
          records[j]!.offset === records[j - 1]!.offset + records[j - 1]!.length + 1
        ) {
          j++;
        }
        let run: RunRead;
        try {
          run = await readRun(directory, cache, files, records.slice(i, j), p + i);
        } catch (e) {
          run = { events: [], failure: e }; // a failed file read: the page before it first, as readAll would
        }
        for (const event of run.events) {
          page.push(event);
          if (++count >= max || page.length >= pageSize) {
            yield page;
            page = [];
          }
        }
        failure = run.failure;
        i = j;
      }
      if (page.length > 0) yield page;
      if (failure !== undefined) throw failure;
      p += n;
    }
  } finally {
    for (const f of files.values()) await f.close();
  }
}

/** The events of a run of index records, in order, up to its first damaged line (then `failure` says which). */
interface RunRead {
  readonly events: RecordedEvent[];
  readonly failure?: unknown;
}

const readRun = async (
  directory: StoreDirectory,
  cache: StreamCache,
  files: Map<string, FileOps>,
  run: IndexRecord[],
  firstPos: number,
): Promise<RunRead> => {
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
  const events: RecordedEvent[] = [];
  for (let i = 0; i < run.length; i++) {
    const r = run[i]!;
    const decoded = decodeLineAt(bytes, r.offset - start, r.offset - start + r.length);
    if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.crc !== r.lineCrc || decoded.event.pos !== firstPos + i) {
      return { events, failure: new StoreCorruptError(name, r.offset, typeof decoded === 'string' ? decoded : `line does not match index record ${firstPos + i}`) };
    }
    events.push(recordedEvent(stream, decoded.event));
  }
  return { events };
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
