import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readIndexRecords, type IndexView } from './global-index.js';
import { decodeLine, type StoredEvent } from './line-codec.js';
import { backwardLines, forwardLines } from './stream-file.js';

/**
 * Which lines of a stream file are committed. A stream file is always a committed prefix followed by at most
 * one uncommitted tail: a torn line, or whole lines whose batch never reached the global index (the writer
 * crashed, or is writing right now). A line is committed when the index record at its `pos` points back at it
 * (same file, offset, length and checksum) and that record is inside the index's committed prefix.
 * Only the lock holder cuts an uncommitted tail; readers just stop before it.
 */

export interface IndexLookup {
  readonly file: FileOps;
  readonly path: string;
  readonly view: IndexView;
}

export interface LineEntry {
  readonly event: StoredEvent;
  readonly offset: number;
  /** Bytes of the line without its newline. */
  readonly length: number;
  readonly crc: number;
}

/**
 * What the index says of a line: `committed` when the committed record at its position names its place (file,
 * offset, length) and its checksum; `other-content` when that record names its place but another checksum; else
 * `uncommitted`.
 *
 * Why `other-content` is damage, never a crash's leftover — the premise, tested by verifyLog (every committed
 * record's place holds a line with its checksum and position, after every crash and power loss of the suites) and
 * by recovery-edges.test.ts (a rewritten abandoned commit): a crash leaves other lines only after a stream's
 * committed end, and a later commit that takes their place and position overwrites them before it writes its
 * records, because (1) a commit writes its lines before its index records; (2) nothing writes before a stream's
 * committed end: appends go at the end the writer refreshed under the lock, cuts and rollbacks only after it;
 * (3) a power loss cannot bring an older line back under a committed record: a journaled commit's lines are in
 * the journal, fsynced before its records are written, kept until a checkpoint has fsynced the stream files, and
 * written back at open before anything reads (replayJournalStreams); a large commit fsyncs its stream file, a new
 * stream's file is fsynced and linked, before the records. So the checksum is what tells damage (a line replaced
 * by another that is valid on its own) from a committed line; scanCommitted refuses it. (A reader racing a commit
 * that is rolled back after its index write could see the rolled-back line and, later, the record of a commit
 * that rewrote its place: readers treat `other-content` as uncommitted and do not refuse.)
 */
export type Commitment = 'committed' | 'uncommitted' | 'other-content';

export const commitmentOf = async (index: IndexLookup, hash: string, e: LineEntry): Promise<Commitment> => {
  if (e.event.pos >= index.view.count) return 'uncommitted';
  const [r] = await readIndexRecords(index.file, index.path, e.event.pos, 1);
  if (r!.fileHash !== hash || r!.offset !== e.offset || r!.length !== e.length) return 'uncommitted';
  return r!.lineCrc === e.crc ? 'committed' : 'other-content';
};

/** Is the line committed? (see commitmentOf) */
export const isCommitted = async (index: IndexLookup, hash: string, e: LineEntry): Promise<boolean> => (await commitmentOf(index, hash, e)) === 'committed';

/**
 * A damaged complete line was found after the last committed line. It is an uncommitted leftover unless some
 * committed index record after `afterPos` points into this file at or beyond `offset`: then it is corruption.
 */
const assertNotCommitted = async (index: IndexLookup, hash: string, afterPos: number, file: string, offset: number, reason: string, line?: number): Promise<void> => {
  const BATCH = 1024;
  for (let p = afterPos + 1; p < index.view.count; p += BATCH) {
    const records = await readIndexRecords(index.file, index.path, p, Math.min(BATCH, index.view.count - p));
    if (records.some((r) => r.fileHash === hash && r.offset >= offset)) throw new StoreCorruptError(file, offset, reason, line);
  }
};

/**
 * An uncommitted line after a file's committed part may only be what a crash leaves: a line of the one unfinished
 * commit, which started at the index's committed count (`g` = count), or of an older abandoned commit whose
 * positions others took (`g` < count). A line of a commit that started past the index's end was committed once
 * and the index lost its records: refuse rather than cut it.
 */
export const assertCrashLeftover = (fileName: string, e: LineEntry, count: number): void => {
  const g = e.event.g;
  if (g !== undefined && g > count) {
    throw new StoreCorruptError(
      fileName,
      e.offset,
      `the line of position ${e.event.pos} (revision ${e.event.rev}) belongs to a commit that started at position ${g}, but the index holds only ${count} committed records: the index lost committed records`,
    );
  }
};

export interface StreamTail {
  /** Byte just after the last committed line (or after the header when no event is committed). */
  readonly end: number;
  /** Byte just after the header line. */
  readonly headerEnd: number;
  readonly lastRevision: number;
  readonly lastPosition: number;
}

/** Finds the committed end of a stream file by reading it backwards from `size` (usually one line and one record). */
export const committedTail = async (
  file: FileOps,
  fileName: string,
  size: number,
  stream: string,
  hash: string,
  index: IndexLookup,
): Promise<StreamTail> => {
  let found: { end: number; rev: number; pos: number } | undefined;
  let damaged: { offset: number; reason: string } | undefined;
  for await (const line of backwardLines(file, size)) {
    if (!line.complete) {
      // a torn last line: a crash's leftover, or a committed line that lost its end (checked like a damaged one)
      damaged ??= { offset: line.offset, reason: 'a line without its newline at the end of the file' };
      continue;
    }
    const decoded = decodeLine(line.bytes);
    if (typeof decoded === 'string') {
      damaged ??= { offset: line.offset, reason: decoded };
      continue;
    }
    const end = line.offset + line.bytes.length + 1;
    if (decoded.kind === 'header') {
      if (line.offset !== 0) throw new StoreCorruptError(fileName, line.offset, 'header line in the middle of the file');
      if (decoded.stream !== stream) throw new StoreCorruptError(fileName, 0, `file belongs to stream ${JSON.stringify(decoded.stream)}`, 1);
      if (found === undefined) found = { end, rev: -1, pos: -1 };
      if (damaged) await assertNotCommitted(index, hash, found.pos, fileName, damaged.offset, damaged.reason);
      return { end: found.end, headerEnd: end, lastRevision: found.rev, lastPosition: found.pos };
    }
    if (found === undefined) {
      const entry: LineEntry = { event: decoded.event, offset: line.offset, length: line.bytes.length, crc: decoded.crc };
      if (await isCommitted(index, hash, entry)) {
        found = { end, rev: decoded.event.rev, pos: decoded.event.pos };
        if (damaged) await assertNotCommitted(index, hash, found.pos, fileName, damaged.offset, damaged.reason);
        damaged = undefined;
      }
    } else if (damaged === undefined) {
      // Keep walking only to reach the header; committed lines are verified when read forwards.
      break;
    }
  }
  if (found !== undefined) {
    // Stopped early: the header is read separately.
    const header = await headerOf(file, fileName, stream);
    return { end: found.end, headerEnd: header, lastRevision: found.rev, lastPosition: found.pos };
  }
  throw new StoreCorruptError(fileName, 0, 'stream file has no header line', 1);
};

/** Reads and checks the header line; returns the byte just after it. */
export const headerOf = async (file: FileOps, fileName: string, stream: string | undefined): Promise<number> => {
  for await (const line of forwardLines(file, 0, await file.size())) {
    const decoded = decodeLine(line.bytes);
    if (typeof decoded === 'string' || decoded.kind !== 'header') {
      throw new StoreCorruptError(fileName, 0, typeof decoded === 'string' ? `header: ${decoded}` : 'first line is not a header', 1);
    }
    if (stream !== undefined && decoded.stream !== stream) {
      throw new StoreCorruptError(fileName, 0, `file belongs to stream ${JSON.stringify(decoded.stream)}`, 1);
    }
    return line.bytes.length + 1;
  }
  throw new StoreCorruptError(fileName, 0, 'stream file has no header line', 1);
};

/** Reads the stream id from a file's header line. */
export const streamOfFile = async (file: FileOps, fileName: string): Promise<string> => {
  for await (const line of forwardLines(file, 0, await file.size())) {
    const decoded = decodeLine(line.bytes);
    if (typeof decoded !== 'string' && decoded.kind === 'header') return decoded.stream;
    break;
  }
  throw new StoreCorruptError(fileName, 0, 'stream file has no header line', 1);
};

export interface ScanResult {
  /** Committed lines of the scanned region, in order. */
  readonly entries: LineEntry[];
  /** Byte just after the last committed line (or `start` when none). */
  readonly end: number;
}

/**
 * Scans `[start, size)` forwards (the region after a known committed end) and returns its committed lines.
 * Revisions must continue `lastRevision`; a damaged line before a committed one is corruption.
 */
export const scanCommitted = async (
  file: FileOps,
  fileName: string,
  start: number,
  size: number,
  lastRevision: number,
  lastPosition: number,
  hash: string,
  index: IndexLookup,
): Promise<ScanResult> => {
  const entries: LineEntry[] = [];
  let damaged: { offset: number; reason: string } | undefined;
  let expectedRev = lastRevision + 1;
  for await (const line of forwardLines(file, start, size)) {
    const decoded = decodeLine(line.bytes);
    if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.event.rev !== expectedRev) {
      const reason =
        typeof decoded === 'string' ? decoded : decoded.kind !== 'event' ? 'unexpected header line' : `revision ${decoded.event.rev}, expected ${expectedRev}`;
      damaged ??= { offset: line.offset, reason };
      if (typeof decoded === 'string' || decoded.kind !== 'event') continue;
      // A line after a damaged one: collected only to find out whether anything committed follows the damage.
    }
    if (typeof decoded !== 'string' && decoded.kind === 'event') {
      entries.push({ event: decoded.event, offset: line.offset, length: line.bytes.length, crc: decoded.crc });
      expectedRev = decoded.event.rev + 1;
    }
  }
  let k = entries.length - 1;
  for (; k >= 0; k--) {
    const e = entries[k]!;
    const commitment = await commitmentOf(index, hash, e);
    if (commitment === 'committed') break;
    if (commitment === 'other-content') {
      // damage, not a crash's leftover (see commitmentOf): refused, nothing cut
      throw new StoreCorruptError(fileName, e.offset, `the index's record of position ${e.event.pos} points at a line with another checksum`);
    }
  }
  const committed = entries.slice(0, k + 1);
  for (const e of entries.slice(k + 1)) assertCrashLeftover(fileName, e, index.view.count);
  if (damaged) {
    const lastCommitted = committed.at(-1);
    if (lastCommitted && damaged.offset <= lastCommitted.offset) throw new StoreCorruptError(fileName, damaged.offset, damaged.reason);
    await assertNotCommitted(index, hash, lastCommitted?.event.pos ?? lastPosition, fileName, damaged.offset, damaged.reason);
  }
  const last = committed.at(-1);
  return { entries: committed, end: last ? last.offset + last.length + 1 : start };
};
