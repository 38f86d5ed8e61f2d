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
import { PartitionSkip } from './partition-skip.js';
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
 * EventStore.readAllPages: the global index in reads of 512 records; a page is the events of one index read (at most
 * `pageSize`). The records of one stream file in an index read are one file read, and the files of an index read
 * are read concurrently (at most {@link OPEN_FILES} at once); every line is then checked in order (checksum, JSON,
 * position) before its page is handed out. A damaged line, or a failed file read, ends the read with its error
 * after the page of the good events before it, so `readAll` yields exactly what it yields one event at a time.
 * With `partition`, the records of other partitions' streams are left out before their lines are read.
 */
export async function* readAllPages(directory: StoreDirectory, cache: StreamCache, options: ReadAllPagesOptions): AsyncGenerator<RecordedEvent[]> {
  directory.assertOpen();
  const view = await io('readAll', () => viewIndex(directory.indexRead, directory.indexPath));
  // read after the index view: a stream deleted before the view was taken is skipped (its records are in the view)
  await io('readAll', () => directory.refreshDeletions());
  const max = options.maxCount ?? Number.POSITIVE_INFINITY;
  const pageSize = pageSizeOf(options, Number.POSITIVE_INFINITY);
  let p = options.after === undefined ? 0 : Math.max(0, Number(options.after) + 1);
  let count = 0;
  const files = new Map<string, Promise<OpenFile>>();
  const skip = new PartitionSkip(directory, cache, options.partition);
  try {
    while (p < view.count && count < max) {
      const n = Math.min(READ_ALL_PAGE, view.count - p);
      const records = await readIndexRecords(directory.indexRead, directory.indexPath, p, n);
      await skip.learn(records, (hash) => directory.isDeleted(hash));
      const runs = runsOf(records, p, (hash) => directory.isDeleted(hash) || skip.skipped(hash), max - count);
      let page: RecordedEvent[] = [];
      let failure: unknown;
      for (let b = 0; b < runs.length && failure === undefined; ) {
        // a batch of runs touching at most OPEN_FILES files, read concurrently
        const batch: Run[] = [];
        const hashes = new Set<string>();
        for (; b < runs.length && (hashes.size < OPEN_FILES || hashes.has(runs[b]!.records[0]!.fileHash)); b++) {
          hashes.add(runs[b]!.records[0]!.fileHash);
          batch.push(runs[b]!);
        }
        if (files.size + hashes.size > OPEN_FILES) await closeAll(files, hashes);
        for (const hash of hashes) if (!cache.fileOfHash.has(hash)) await cache.fileNameOf(hash).catch(() => undefined); // one directory listing, not one per file
        const spans = await readSpans(directory, cache, files, batch);
        for (const run of batch) {
          const result = decodeRun(run, spans.get(run.records[0]!.fileHash)!);
          for (const event of result.events) {
            page.push(event);
            if (++count >= max || page.length >= pageSize) {
              yield page;
              page = [];
            }
          }
          if (result.failure !== undefined) {
            failure = result.failure;
            break;
          }
        }
      }
      if (page.length > 0) yield page;
      if (failure !== undefined) throw failure;
      p += n;
    }
  } finally {
    await closeAll(files, new Set());
  }
}

/** Stream files the all-streams read keeps open at once. */
const OPEN_FILES = 64;

/** A stream file the all-streams read has open, with its stream's name. */
interface OpenFile {
  readonly file: FileOps;
  readonly name: string;
  readonly stream: string;
}

/** Index records contiguous in one stream file (one batch, usually), and the global position of the first. */
interface Run {
  readonly records: IndexRecord[];
  readonly firstPos: number;
}

/** The events of a run, in order, up to its first damaged line (then `failure` says which). */
interface RunRead {
  readonly events: RecordedEvent[];
  readonly failure?: unknown;
}

/**
 * The runs of `records` (the first at global position `p`), the records of `isLeftOut` files (deleted streams, streams
 * of partitions not read) left out, `max` events at most.
 */
const runsOf = (records: readonly IndexRecord[], p: number, isLeftOut: (hash: string) => boolean, max: number): Run[] => {
  const runs: Run[] = [];
  let wanted = max;
  let i = 0;
  while (i < records.length && wanted > 0) {
    if (isLeftOut(records[i]!.fileHash)) {
      i++; // a deleted (archived) stream's record: its position stays taken, its event is gone (or another partition's)
      continue;
    }
    let j = i + 1;
    while (
      j < records.length &&
      j - i < wanted &&
      records[j]!.fileHash === records[i]!.fileHash &&
      records[j]!.offset === records[j - 1]!.offset + records[j - 1]!.length + 1
    ) {
      j++;
    }
    runs.push({ records: records.slice(i, j), firstPos: p + i });
    wanted -= j - i;
    i = j;
  }
  return runs;
};

/** Closes the open files but those of `keep`. */
const closeAll = async (files: Map<string, Promise<OpenFile>>, keep: ReadonlySet<string>): Promise<void> => {
  const closing: Promise<unknown>[] = [];
  for (const [hash, open] of files) {
    if (keep.has(hash)) continue;
    files.delete(hash);
    closing.push(open.then((f) => f.file.close(), () => undefined));
  }
  await Promise.all(closing);
};

const openFile = async (directory: StoreDirectory, cache: StreamCache, hash: string): Promise<OpenFile> => {
  const name = await cache.fileNameOf(hash);
  const file = await directory.fs.open(join(directory.streamsDir, name), 'read');
  try {
    let stream = cache.streamOfHash.get(hash);
    if (stream === undefined) {
      stream = await streamOfFile(file, name);
      cache.streamOfHash.set(hash, stream);
    }
    return { file, name, stream };
  } catch (e) {
    await file.close();
    throw e;
  }
};

/** The bytes one file read took from a stream file (from `base`), or the error it failed with. */
type Span = { readonly file: OpenFile; readonly bytes: Buffer; readonly base: number } | { readonly failure: unknown };

/**
 * One read per stream file for the runs of `batch`, concurrently: the bytes from its first run's first line to its
 * last run's last line. A stream file's lines between two of its records in one index read belong to that read too
 * (a stream's lines are in position order), so the span holds nothing the page does not use.
 */
const readSpans = async (directory: StoreDirectory, cache: StreamCache, files: Map<string, Promise<OpenFile>>, batch: readonly Run[]): Promise<Map<string, Span>> => {
  const ranges = new Map<string, { start: number; end: number }>();
  for (const { records } of batch) {
    const hash = records[0]!.fileHash;
    const last = records[records.length - 1]!;
    const range = ranges.get(hash);
    const start = records[0]!.offset;
    const end = last.offset + last.length + 1;
    if (range === undefined) ranges.set(hash, { start, end });
    else {
      range.start = Math.min(range.start, start);
      range.end = Math.max(range.end, end);
    }
  }
  const spans = new Map<string, Span>();
  await Promise.all(
    [...ranges].map(async ([hash, { start, end }]) => {
      try {
        let opening = files.get(hash);
        if (opening === undefined) {
          opening = openFile(directory, cache, hash);
          files.set(hash, opening);
        }
        const file = await opening;
        spans.set(hash, { file, bytes: await readExactly(file.file, start, end - start, file.name), base: start });
      } catch (failure) {
        spans.set(hash, { failure });
      }
    }),
  );
  return spans;
};

/** The events of a run, decoded from its file's span and checked, up to its first damaged line. */
const decodeRun = ({ records, firstPos }: Run, span: Span): RunRead => {
  if ('failure' in span) return { events: [], failure: span.failure };
  const { file, bytes, base } = span;
  const events: RecordedEvent[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const decoded = decodeLineAt(bytes, r.offset - base, r.offset - base + r.length);
    if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.crc !== r.lineCrc || decoded.event.pos !== firstPos + i) {
      return { events, failure: new StoreCorruptError(file.name, r.offset, typeof decoded === 'string' ? decoded : `line does not match index record ${firstPos + i}`) };
    }
    events.push(recordedEvent(file.stream, decoded.event));
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
