import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { WorkSlices } from '../shared/work-slices.js';
import type { FileOps } from './fs-ops.js';
import { decodeIndexRecord, encodeIndexRecord, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';

/**
 * The global index `global.idx`: record p (at byte p × 80) says where the event at global position p lives.
 * It is the commit point of the store: an event is committed once its record, and the record marking the end
 * of its batch (`E`), are in the index. Records after the last `E` belong to a batch that never finished.
 */
export const INDEX_FILE = 'global.idx';

export interface IndexView {
  /** Number of committed records: positions 0 … count-1. */
  readonly count: number;
  /** Byte size of the file when looked at (may hold an unfinished batch after count × 80). */
  readonly size: number;
}

const SCAN_BACK = 256;

/** Finds the committed prefix of the index: up to and including the last batch-end record. */
export const viewIndex = async (file: FileOps, path: string): Promise<IndexView> => {
  const size = await file.size();
  let end = Math.floor(size / INDEX_RECORD_BYTES);
  let back = 1; // usually the last record ends a batch: read just that one first
  while (end > 0) {
    const from = Math.max(0, end - back);
    back = SCAN_BACK;
    const buffer = await readExactly(file, from * INDEX_RECORD_BYTES, (end - from) * INDEX_RECORD_BYTES, path);
    for (let i = end - from - 1; i >= 0; i--) {
      const r = decodeIndexRecord(buffer, i * INDEX_RECORD_BYTES);
      if (typeof r !== 'string' && r.batchEnd) return { count: from + i + 1, size };
    }
    end = from;
  }
  return { count: 0, size };
};

/** Reads committed records [from, from + n); every one must decode. */
export const readIndexRecords = async (file: FileOps, path: string, from: number, n: number): Promise<IndexRecord[]> => {
  const buffer = await readExactly(file, from * INDEX_RECORD_BYTES, n * INDEX_RECORD_BYTES, path);
  const out: IndexRecord[] = [];
  for (let i = 0; i < n; i++) {
    const r = decodeIndexRecord(buffer, i * INDEX_RECORD_BYTES);
    if (typeof r === 'string') {
      throw new StoreCorruptError(path, (from + i) * INDEX_RECORD_BYTES, `${r} (global position ${from + i})`, from + i + 1);
    }
    out.push(r);
  }
  return out;
};

export const encodeIndexRecords = (records: readonly IndexRecord[]): Buffer => {
  const buffer = Buffer.alloc(records.length * INDEX_RECORD_BYTES);
  records.forEach((r, i) => encodeIndexRecord(r, buffer, i * INDEX_RECORD_BYTES));
  return buffer;
};

/** How many index records are encoded between two looks at the slices. */
const RECORDS_PER_PIECE = 256;

/**
 * `encodeIndexRecords`'s very bytes, a piece of 256 records at a time: between two pieces, once `slices` says a slice
 * ran (`WorkSlices.due`), it lets the event loop run (a group commit of thousands of events has as many records).
 */
export const encodeIndexRecordsSliced = async (records: readonly IndexRecord[], slices: WorkSlices): Promise<Buffer> => {
  const buffer = Buffer.alloc(records.length * INDEX_RECORD_BYTES);
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && i % RECORDS_PER_PIECE === 0 && slices.due) await slices.pause();
    encodeIndexRecord(records[i]!, buffer, i * INDEX_RECORD_BYTES);
  }
  return buffer;
};

export const readExactly = async (file: FileOps, position: number, length: number, path: string): Promise<Buffer> => {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const got = await file.read(buffer, done, length - done, position + done);
    if (got === 0) throw new StoreCorruptError(path, position + done, `file ends before byte ${position + length}`);
    done += got;
  }
  return buffer;
};
