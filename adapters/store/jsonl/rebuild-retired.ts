import { join } from 'node:path';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { Deletions } from './deletions.js';
import { isErrnoCode, type FsOps } from './fs-ops.js';
import { INDEX_FILE } from './global-index.js';
import { decodeIndexRecord, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';

/**
 * The retired positions of a rebuilt index: the global positions of deleted (archived) streams' events, whose lines
 * are gone with their files. Their records keep the positions taken (readers skip a record whose file the deletion
 * log names), so every other event keeps its global position.
 */

/** Where the records of the retired positions came from. */
export type RetiredAttribution = 'previous-index' | 'deletion-log';

/** What the rebuild kept retired. */
export interface RetiredReport {
  /** Positions kept retired (events of deleted streams whose files are gone). */
  readonly events: number;
  /** Deleted streams the deletion log names. */
  readonly streams: number;
  /**
   * `previous-index`: every retired record is the previous index's own (intact, naming a deleted stream, as many as
   * that stream had); `deletion-log`: the previous index could not say, so the retired positions are given to the
   * deleted streams in deletion-log order, as many to each as it had events (which deleted stream held which
   * position is then not known; no reader asks). null when nothing was retired.
   */
  readonly attribution: RetiredAttribution | null;
}

/** A record without its batch-end mark (the rebuild sets the marks). */
export type UnmarkedRecord = Omit<IndexRecord, 'batchEnd'>;

/**
 * How many events each deleted stream's retired positions must hold: its event count (revision + 1) when its file is
 * gone; none when its file is still there (a crash between the deletion and the file's removal: its lines are
 * indexed, as they were). A file that holds another number of events than the deletion log says cannot be explained.
 */
export const retiredCounts = (deletions: Deletions, linesOfDeleted: ReadonlyMap<string, { readonly file: string; readonly lines: number }>): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const [hash, d] of deletions.byHash) {
    const present = linesOfDeleted.get(hash);
    if (present === undefined) counts.set(hash, d.revision + 1);
    else if (present.lines !== d.revision + 1) {
      throw new StoreCorruptError(present.file, 0, `the file of deleted stream ${JSON.stringify(d.stream)} holds ${present.lines} events; the deletion log says it had ${d.revision + 1}: cannot rebuild`);
    }
  }
  return counts;
};

/**
 * The records of the retired positions `gaps` (ascending): the previous index's when it has an intact record naming
 * a deleted stream at every one, each stream's count and file order as the deletion log and the index require;
 * otherwise one per position, given to the deleted streams in deletion-log order (offsets 0, 1, 2… of a file that is
 * gone, so each stream's records still point forward).
 */
export const retiredRecords = async (fs: FsOps, dir: string, gaps: readonly number[], counts: ReadonlyMap<string, number>): Promise<{ records: Map<number, UnmarkedRecord>; attribution: RetiredAttribution | null }> => {
  if (gaps.length === 0) return { records: new Map(), attribution: null };
  const previous = await fromPreviousIndex(fs, dir, gaps, counts);
  if (previous) return { records: previous, attribution: 'previous-index' };
  const records = new Map<number, UnmarkedRecord>();
  let at = 0;
  for (const [fileHash, n] of counts) {
    for (let k = 0; k < n; k++) records.set(gaps[at++]!, { fileHash, offset: k, length: 0, lineCrc: 0 });
  }
  return { records, attribution: 'deletion-log' };
};

const fromPreviousIndex = async (fs: FsOps, dir: string, gaps: readonly number[], counts: ReadonlyMap<string, number>): Promise<Map<number, UnmarkedRecord> | null> => {
  let file;
  try {
    file = await fs.open(join(dir, INDEX_FILE), 'read');
  } catch (e) {
    if (isErrnoCode(e, 'ENOENT')) return null;
    throw e;
  }
  try {
    const size = await file.size();
    const records = new Map<number, UnmarkedRecord>();
    const seen = new Map<string, { n: number; end: number }>();
    const buffer = Buffer.alloc(INDEX_RECORD_BYTES);
    for (const p of gaps) {
      if ((p + 1) * INDEX_RECORD_BYTES > size) return null;
      let done = 0;
      while (done < INDEX_RECORD_BYTES) {
        const got = await file.read(buffer, done, INDEX_RECORD_BYTES - done, p * INDEX_RECORD_BYTES + done);
        if (got === 0) return null;
        done += got;
      }
      const r = decodeIndexRecord(buffer, 0);
      if (typeof r === 'string' || !counts.has(r.fileHash)) return null;
      const before = seen.get(r.fileHash);
      const end = r.offset + r.length + 1;
      if (before && end <= before.end) return null;
      seen.set(r.fileHash, { n: (before?.n ?? 0) + 1, end });
      records.set(p, { fileHash: r.fileHash, offset: r.offset, length: r.length, lineCrc: r.lineCrc });
    }
    for (const [hash, n] of counts) if ((seen.get(hash)?.n ?? 0) !== n) return null;
    return records;
  } finally {
    await file.close();
  }
};
