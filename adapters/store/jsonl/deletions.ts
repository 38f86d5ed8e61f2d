import { join } from 'node:path';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { isErrnoCode, type FsOps } from './fs-ops.js';
import { crc32 } from './line-codec.js';

/**
 * The deletion log `deleted.log`: one line per deleted (archived) stream, each with its own CRC-32 like a stream
 * line, appended and fsynced under the directory lock **before** the stream file is removed:
 *
 * ```
 * {"c":"<crc32 of the d object's bytes>","d":{"format":"steerlog-jsonl-deletion","version":1,"stream":…,"hash":…,"revision":…,"time":…}}
 * ```
 *
 * A stream named here is deleted: readers skip its index records (they stay in `global.idx`, so no global position
 * is ever reused or renumbered), recovery does not require its file, a writable open removes a file a crash left
 * behind, and the id can never be written again. A torn last line (no newline: a crash while appending it) means
 * that deletion never happened; it is cut into the quarantine by the next deletion or writable open.
 */
export const DELETIONS_FILE = 'deleted.log';
const FORMAT = 'steerlog-jsonl-deletion';
const PREFIX = '{"c":"';

/** One deleted stream. */
export interface DeletionRecord {
  readonly stream: string;
  /** The stream file's hash (its index records carry it). */
  readonly hash: string;
  /** The last revision it had when it was deleted. */
  readonly revision: number;
  readonly time: number;
}

/** The deletion log as read: the deleted streams by file hash, and where its intact part ends. */
export interface Deletions {
  readonly byHash: ReadonlyMap<string, DeletionRecord>;
  /** Bytes of whole, valid lines; what follows is a torn last line. */
  readonly validEnd: number;
  readonly size: number;
}

/** The empty deletion log (no file). */
export const NO_DELETIONS: Deletions = { byHash: new Map(), validEnd: 0, size: 0 };

/** Encodes one deletion line (with its newline). */
export const encodeDeletion = (r: DeletionRecord): Buffer => {
  const inner = JSON.stringify({ format: FORMAT, version: 1, stream: r.stream, hash: r.hash, revision: r.revision, time: r.time });
  const crc = crc32(Buffer.from(inner, 'utf8')).toString(16).padStart(8, '0');
  return Buffer.from(`${PREFIX}${crc}","d":${inner}}\n`, 'utf8');
};

const decodeDeletion = (line: Buffer): DeletionRecord | string => {
  const text = line.toString('utf8');
  if (!text.startsWith(PREFIX) || text.slice(14, 20) !== '","d":' || !text.endsWith('}')) return 'not a deletion line';
  const inner = text.slice(20, -1);
  if (crc32(Buffer.from(inner, 'utf8')).toString(16).padStart(8, '0') !== text.slice(6, 14)) return 'checksum mismatch';
  try {
    const d = JSON.parse(inner) as Record<string, unknown>;
    if (d.format !== FORMAT || d.version !== 1) return `unknown deletion format ${String(d.format)} version ${String(d.version)}`;
    if (typeof d.stream !== 'string' || typeof d.hash !== 'string' || typeof d.revision !== 'number' || typeof d.time !== 'number') return 'missing fields';
    return { stream: d.stream, hash: d.hash, revision: d.revision, time: d.time };
  } catch {
    return 'not JSON';
  }
};

/** Reads the whole deletion log (small: one line per deleted stream). A damaged complete line is store-corrupt. */
export const readDeletions = async (fs: FsOps, dir: string): Promise<Deletions> => {
  const path = join(dir, DELETIONS_FILE);
  let file;
  try {
    file = await fs.open(path, 'read');
  } catch (e) {
    if (isErrnoCode(e, 'ENOENT')) return NO_DELETIONS;
    throw e;
  }
  try {
    const size = await file.size();
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const got = await file.read(bytes, done, size - done, done);
      if (got === 0) break;
      done += got;
    }
    const byHash = new Map<string, DeletionRecord>();
    let at = 0;
    let line = 0;
    for (;;) {
      const nl = bytes.indexOf(0x0a, at);
      if (nl < 0 || nl >= done) break;
      line++;
      const r = decodeDeletion(bytes.subarray(at, nl));
      if (typeof r === 'string') throw new StoreCorruptError(DELETIONS_FILE, at, r, line);
      byHash.set(r.hash, r);
      at = nl + 1;
    }
    return { byHash, validEnd: at, size: done };
  } finally {
    await file.close();
  }
};
