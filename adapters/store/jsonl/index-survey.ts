import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readExactly, type IndexView } from './global-index.js';
import { decodeIndexRecord, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';

/**
 * Whole-index checks run when a store opens: what a crash can leave at the end of the index, and where each
 * stream file's committed part must end according to the index.
 */

/** The last committed index record that points into one stream file. */
export interface FileCommitted {
  /** Its global position. */
  readonly lastPos: number;
  readonly record: IndexRecord;
  /** Byte just after that line's newline: the file's committed length. */
  readonly end: number;
  /** How many committed records point into the file. */
  readonly count: number;
}

const SURVEY_PAGE = 4096;

/**
 * Reads every committed record [0, count) once (80 bytes per event) and returns, per file hash, the last record
 * pointing into it. A record that does not decode is corruption of the committed region.
 */
export const surveyIndex = async (file: FileOps, path: string, count: number): Promise<Map<string, FileCommitted>> => {
  const files = new Map<string, FileCommitted>();
  for (let from = 0; from < count; from += SURVEY_PAGE) {
    const n = Math.min(SURVEY_PAGE, count - from);
    const buffer = await readExactly(file, from * INDEX_RECORD_BYTES, n * INDEX_RECORD_BYTES, path);
    for (let i = 0; i < n; i++) {
      const r = decodeIndexRecord(buffer, i * INDEX_RECORD_BYTES);
      const pos = from + i;
      if (typeof r === 'string') throw new StoreCorruptError(path, pos * INDEX_RECORD_BYTES, `${r} (global position ${pos}, inside the committed index)`, pos + 1);
      const before = files.get(r.fileHash);
      const end = r.offset + r.length + 1;
      if (before && end <= before.end) {
        throw new StoreCorruptError(path, pos * INDEX_RECORD_BYTES, `record of position ${pos} points at byte ${r.offset} of its file, before the line of position ${before.lastPos}`, pos + 1);
      }
      files.set(r.fileHash, { lastPos: pos, record: r, end, count: (before?.count ?? 0) + 1 });
    }
  }
  return files;
};

/**
 * What follows the last batch-end record must be what a crash leaves: a partial record, or complete records of
 * the unfinished commit (valid, without the batch-end mark) — or, after a power loss, a record holding bytes
 * that never reached the disk (NUL bytes). A complete record that is damaged any other way was written and then
 * changed: corruption, refused rather than cut with the commit it ends.
 */
export const assertCrashTail = async (file: FileOps, path: string, view: IndexView): Promise<void> => {
  const complete = Math.floor(view.size / INDEX_RECORD_BYTES);
  if (complete <= view.count) return;
  const buffer = await readExactly(file, view.count * INDEX_RECORD_BYTES, (complete - view.count) * INDEX_RECORD_BYTES, path);
  for (let i = 0; i < complete - view.count; i++) {
    const at = i * INDEX_RECORD_BYTES;
    const r = decodeIndexRecord(buffer, at);
    if (typeof r !== 'string') continue;
    if (buffer.subarray(at, at + INDEX_RECORD_BYTES).includes(0)) continue;
    const pos = view.count + i;
    throw new StoreCorruptError(path, pos * INDEX_RECORD_BYTES, `${r} (global position ${pos}, after the last commit mark): a complete record that was changed after it was written`, pos + 1);
  }
};
