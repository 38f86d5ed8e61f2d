import { streamRevision, type ReadPagesOptions, type ReadStreamOptions, type RecordedEvent, type StreamRevision } from '../../../runtime/ports/event-store.js';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { pageSizeOf } from '../../../runtime/ports/paged-reads.js';
import { recordedEvent } from './event-reads.js';
import type { FileOps } from './fs-ops.js';
import { viewIndex, type IndexView } from './global-index.js';
import { OFFSET_STEP } from './index-revisions.js';
import { decodeLineAt, INDEX_RECORD_BYTES, type StoredEvent } from './line-codec.js';
import { committedTail } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';
import { seekLine } from './line-seek.js';
import { backwardLines, forwardLineRuns } from './stream-file.js';

/**
 * The stream read path: no lock. A reader stops before a stream file's uncommitted tail. Reads go a page at a
 * time: forwards, a page is the lines one file read completes (or `pageSize` of them); every line is still checked
 * on its own (checksum, JSON, fields, revision continuity) before its page is handed out.
 */

/** Bytes a forward stream read takes from the file at a time. */
const READ_CHUNK = 256 * 1024;
/** A read by seq that would skip more bytes than this before its revision seeks its line first (line-seek.ts). */
const SEEK_BYTES = 256 * 1024;
/** How near below the revision asked for the seek's line must be, in revisions. */
const SEEK_NEAR = 16;
/** Events a backwards page holds when the reader does not say. */
const BACKWARD_PAGE = 512;

/** EventStore.read: the events of `readStreamPages`, one at a time. */
export async function* readStream(directory: StoreDirectory, cache: StreamCache, stream: string, options: ReadStreamOptions): AsyncGenerator<RecordedEvent> {
  for await (const page of readStreamPages(directory, cache, stream, options)) yield* page;
}

/**
 * EventStore.readPages: a stream's committed events, forwards from a remembered line or backwards from its tail,
 * as pages. A damaged line ends the read with StoreCorruptError after the page of the good events before it, so
 * `read` yields exactly what it yielded one event at a time.
 */
export async function* readStreamPages(directory: StoreDirectory, cache: StreamCache, stream: string, options: ReadPagesOptions): AsyncGenerator<RecordedEvent[]> {
  directory.assertOpen();
  const opened = await openCommitted(directory, cache, stream, 'read');
  if (opened === undefined) return;
  const { file, fileName, tail } = opened;
  try {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (max <= 0 || tail.lastRevision < 0) return;
    if ((options.direction ?? 'forwards') === 'forwards') {
      await offsetsFor(directory, cache, stream, file, Number(options.from ?? 0n), tail);
      yield* forwardPages(cache, stream, file, fileName, tail, options, max);
    } else yield* backwardPages(stream, file, fileName, tail, options, max);
  } finally {
    await file.close();
  }
}

/**
 * Before a forward read from revision `from`: when the sparse index lacks the offset of the kept revision at or below
 * `from` (a stream the first read's seed gave no offsets, IndexRevisions.fillOffsets) and no remembered line is
 * nearer: when the lines to skip pass SEEK_BYTES, a bisection of the file's committed bytes finds a line at most
 * SEEK_NEAR revisions (or one probe) before `from` (line-seek.ts: a few probes, remembered as the stream's read hint); failing
 * that, the index pass that gives the offsets — once per store instance, and only when it reads fewer bytes than
 * the lines it lets the read skip (80 bytes per committed record against the stream's lines before `from`, at their
 * mean length): a read near the start of a stream goes through its lines instead.
 */
const offsetsFor = async (directory: StoreDirectory, cache: StreamCache, stream: string, file: FileOps, from: number, tail: Tail): Promise<void> => {
  const revisions = cache.indexRevisions;
  const wanted = Math.floor(Math.min(from, tail.lastRevision) / OFFSET_STEP) * OFFSET_STEP;
  if (wanted < OFFSET_STEP || revisions.offsetsWhole) return;
  const known = revisions.lineAtOrBefore(cache.hashOf(stream), wanted);
  if ((known?.rev ?? 0) >= wanted) return;
  const remembered = cache.readHints.get(stream);
  if (remembered !== undefined && remembered.rev <= from && from - remembered.rev < OFFSET_STEP) return;
  const meanLine = (tail.end - tail.headerEnd) / (tail.lastRevision + 1);
  const skipped = (wanted - (known?.rev ?? 0)) * meanLine;
  // a bisection of the stream file's committed bytes (line-seek.ts): a few 16 KiB probes, not the index
  if (skipped > SEEK_BYTES) {
    const found = await io('read', () => seekLine(file, tail, Math.min(from, tail.lastRevision), SEEK_NEAR));
    if (found !== undefined && found.rev > (known?.rev ?? 0) && (remembered === undefined || remembered.rev > from || found.rev > remembered.rev)) {
      cache.readHints.set(stream, found);
      return;
    }
  }
  const view = await io('read', () => viewIndex(directory.indexRead, directory.indexPath));
  if (skipped <= view.count * INDEX_RECORD_BYTES) return;
  await io('read', () => revisions.fillOffsets(directory.indexRead, directory.indexPath, view.count));
};

interface Tail {
  readonly end: number;
  readonly headerEnd: number;
  readonly lastRevision: number;
}

async function* forwardPages(cache: StreamCache, stream: string, file: FileOps, fileName: string, tail: Tail, options: ReadPagesOptions, max: number): AsyncGenerator<RecordedEvent[]> {
  const pageSize = pageSizeOf(options, Number.POSITIVE_INFINITY);
  const from = Number(options.from ?? 0n);
  // Committed bytes never change, so a remembered (revision, offset) pair lets a read (a live subscription,
  // typically) start mid-file instead of rescanning from the header.
  const remembered = cache.readHints.get(stream);
  // ... or the sparse seq → offset index the first read's index pass keeps (IndexRevisions.lineAtOrBefore): a read
  // from revision r starts at most OFFSET_STEP lines before r, whatever the stream's length
  const revisions = cache.indexRevisions;
  const hash = cache.hashOf(stream);
  const sparse = from > 0 ? revisions.lineAtOrBefore(hash, from) : undefined;
  const hint = sparse !== undefined && sparse.offset <= tail.end && (remembered === undefined || remembered.rev > from || sparse.rev > remembered.rev) ? sparse : remembered;
  const useHint = hint !== undefined && hint.rev <= from && hint.offset <= tail.end;
  let rev = useHint ? hint.rev : 0;
  let line: number | undefined = useHint ? undefined : 1;
  let count = 0;
  for await (const runs of forwardLineRuns(file, useHint ? hint.offset : tail.headerEnd, tail.end, READ_CHUNK)) {
    let page: RecordedEvent[] = [];
    let failure: unknown;
    let done = false;
    let nextRev = 0; // the line after the page's last event: remembered before the page is handed out
    let nextOffset = 0;
    runs: for (const { bytes, base, starts, ends } of runs) {
      for (let i = 0; i < starts.length; i++) {
        if (line !== undefined) line++;
        // a committed line passed: the sparse index learns its offset when it keeps this revision (a seeded stream)
        if (rev % OFFSET_STEP === 0) revisions.noteLine(hash, rev, base + starts[i]!);
        if (rev >= from) {
          const decoded = decodeEvent(bytes, starts[i]!, ends[i]!, fileName, base + starts[i]!, line, rev);
          if (decoded instanceof StoreCorruptError) {
            failure = decoded;
            break runs;
          }
          page.push(recordedEvent(stream, decoded));
          nextRev = rev + 1;
          nextOffset = base + ends[i]! + 1;
          if (++count >= max) done = true;
          if (done || page.length >= pageSize) {
            cache.readHints.set(stream, { rev: nextRev, offset: nextOffset });
            yield page;
            if (done) return;
            page = [];
          }
        }
        rev++;
      }
    }
    if (page.length > 0) {
      cache.readHints.set(stream, { rev: nextRev, offset: nextOffset });
      yield page;
    }
    if (failure !== undefined) throw failure;
  }
}

async function* backwardPages(stream: string, file: FileOps, fileName: string, tail: Tail, options: ReadPagesOptions, max: number): AsyncGenerator<RecordedEvent[]> {
  const pageSize = pageSizeOf(options, BACKWARD_PAGE);
  const from = options.from === undefined ? tail.lastRevision : Math.min(Number(options.from), tail.lastRevision);
  let rev = tail.lastRevision;
  let count = 0;
  let page: RecordedEvent[] = [];
  try {
    for await (const raw of backwardLines(file, tail.end)) {
      if (raw.offset < tail.headerEnd) break;
      if (rev <= from) {
        const decoded = decodeEvent(raw.bytes, 0, raw.bytes.length, fileName, raw.offset, undefined, rev);
        if (decoded instanceof StoreCorruptError) throw decoded;
        page.push(recordedEvent(stream, decoded));
        if (++count >= max) break;
        if (page.length >= pageSize) {
          yield page;
          page = [];
        }
      }
      rev--;
    }
  } catch (e) {
    if (page.length > 0) yield page;
    throw e;
  }
  if (page.length > 0) yield page;
}

/** EventStore.revision: the last committed revision of a stream. */
export const revisionOf = async (directory: StoreDirectory, cache: StreamCache, stream: string): Promise<StreamRevision | 'no_stream'> => {
  directory.assertOpen();
  const opened = await openCommitted(directory, cache, stream, 'revision');
  if (opened === undefined) return 'no_stream';
  const { file, tail } = opened;
  try {
    return tail.lastRevision < 0 ? 'no_stream' : streamRevision(tail.lastRevision);
  } finally {
    await file.close();
  }
};

/** Attempts at a consistent look at a stream file and the index while other writers commit (see openCommitted). */
const ATTEMPTS = 3;

/**
 * Opens a stream file and finds its committed tail, checked against what the committed index holds for it
 * (IndexRevisions: one pass over the index at this instance's first stream read, then only what was committed
 * since). Opening the store checks only the files the last commit touched, so this is where a file that lost whole
 * lines at its end, or was removed, while the index points into it is refused: StoreCorruptError, nothing written.
 * Undefined when the stream is deleted, or has no file and no committed event. The caller closes the file.
 *
 * The index is looked at before the file, so every record in that view points at bytes already in the file. A
 * shortfall is confirmed once more from scratch (fresh deletion log, view, scan and file) before it is refused: a
 * concurrent deletion, or an append rolled back after its index write, is not damage.
 */
const openCommitted = async (
  directory: StoreDirectory,
  cache: StreamCache,
  stream: string,
  op: 'read' | 'revision',
): Promise<{ file: FileOps; fileName: string; tail: Tail } | undefined> => {
  const { path, fileName, hash } = directory.names(stream);
  const revisions = cache.indexRevisions;
  let confirming = false;
  for (let attempt = 1; ; attempt++) {
    await io(op, () => directory.refreshDeletions());
    if (directory.isDeleted(hash)) return undefined;
    const view = await io(op, () => viewIndex(directory.indexRead, directory.indexPath));
    await io(op, () => revisions.upTo(directory.indexRead, directory.indexPath, view.count));
    const indexed = revisions.of(hash);
    const size = await io(op, () => directory.fs.sizeOf(path));
    const file = size === undefined ? undefined : await io(op, () => directory.fs.open(path, 'read'));
    let tail: Tail | undefined;
    try {
      if (file !== undefined) tail = await tailOf(directory, cache, stream, file, fileName, size!, view);
    } catch (e) {
      await file?.close();
      throw e;
    }
    const found = tail?.lastRevision ?? -1;
    // A record past this view (scanned for a concurrent reader's later view) cannot be judged with this one.
    const judged = indexed.position < view.count;
    if (found >= indexed.revision || (!judged && attempt >= ATTEMPTS)) return file === undefined ? undefined : { file, fileName, tail: tail! };
    await file?.close();
    if (!judged) continue;
    if (confirming) {
      throw new StoreCorruptError(
        fileName,
        tail?.end ?? 0,
        file === undefined
          ? `the stream file is missing, but the index holds its events up to revision ${indexed.revision} (global position ${indexed.position})`
          : `the file's committed lines end at revision ${found}, but the index holds revision ${indexed.revision} at global position ${indexed.position}: committed lines are missing`,
      );
    }
    confirming = true;
    await revisions.reset();
  }
};

const tailOf = async (directory: StoreDirectory, cache: StreamCache, stream: string, file: FileOps, fileName: string, size: number, view: IndexView): Promise<Tail> => {
  const state = cache.states.get(stream);
  if (state?.exists && state.size === size) return { end: size, headerEnd: state.headerEnd, lastRevision: state.lastRevision };
  return committedTail(file, fileName, size, stream, directory.names(stream).hash, { file: directory.indexRead, path: directory.indexPath, view });
};

/** Decodes the event line `bytes[start..end)` and checks that it carries the revision its place in the file gives it. */
const decodeEvent = (bytes: Buffer, start: number, end: number, fileName: string, offset: number, line: number | undefined, expectedRev: number): StoredEvent | StoreCorruptError => {
  const decoded = decodeLineAt(bytes, start, end);
  if (typeof decoded === 'string') return new StoreCorruptError(fileName, offset, decoded, line);
  if (decoded.kind !== 'event') return new StoreCorruptError(fileName, offset, 'unexpected header line', line);
  if (decoded.event.rev !== expectedRev) return new StoreCorruptError(fileName, offset, `revision ${decoded.event.rev}, expected ${expectedRev}`, line);
  return decoded.event;
};
