import { DELETIONS_FILE, NO_DELETIONS, readDeletions, type Deletions } from './deletions.js';
import { isStoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { join } from 'node:path';
import { hashOfFileName, streamFileName } from './file-name.js';
import { isErrnoCode, nodeFsOps, type FileOps, type FsOps } from './fs-ops.js';
import { INDEX_FILE, readExactly, viewIndex } from './global-index.js';
import { readJournal, JOURNAL_FILE } from './group-journal.js';
import { decodeIndexRecord, decodeLine, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';
import { STREAMS_DIR } from './store-directory.js';
import { forwardLines } from './stream-file.js';
import { checkJsonlCatalog } from './catalog-maintenance.js';

/** One finding of `checkJsonlStore`: which file, which byte, what disagrees. */
export interface StoreFinding {
  readonly file: string;
  readonly offset: number;
  readonly message: string;
}

/** What `checkJsonlStore` found: `ok` when nothing is damaged (crash leftovers are notes, not problems). */
export interface StoreCheckReport {
  readonly ok: boolean;
  readonly directory: string;
  /** Committed events (records in the index's committed prefix). */
  readonly events: number;
  readonly streams: number;
  /** Damage: open or a read would refuse because of each. */
  readonly problems: readonly StoreFinding[];
  /** What a crash legitimately leaves (an unfinished commit), which the next writable open quarantines. */
  readonly notes: readonly StoreFinding[];
}

const PAGE = 4096;

/**
 * Verifies a JSONL store directory without writing anything: every index record decodes and points at a line
 * holding its position (same offset, length, checksum); every stream line decodes, revisions are dense, each
 * committed line is the one its index record names; what follows a file's committed part is only an unfinished
 * commit. Collects every finding instead of stopping at the first.
 */
export const checkJsonlStore = async (dir: string, fs: FsOps = nodeFsOps): Promise<StoreCheckReport> => {
  const problems: StoreFinding[] = [];
  const notes: StoreFinding[] = [];
  const indexPath = join(dir, INDEX_FILE);
  const streamsDir = join(dir, STREAMS_DIR);
  // a directory or index that cannot be read (permission denied, I/O) is a failure to read, never a finding
  const names = (
    await fs.readdir(streamsDir).catch((e: unknown) => {
      if (isErrnoCode(e, 'ENOENT')) return [] as string[];
      throw e;
    })
  ).filter((n) => hashOfFileName(n) !== undefined);
  let index: FileOps;
  try {
    index = await fs.open(indexPath, 'read');
  } catch (e) {
    if (!isErrnoCode(e, 'ENOENT') || (names.length === 0 && (await fs.sizeOf(dir)) === undefined)) throw e;
    problems.push({ file: INDEX_FILE, offset: 0, message: names.length > 0 ? 'the global index is missing but stream files exist' : 'the global index is missing' });
    return { ok: false, directory: dir, events: 0, streams: names.length, problems, notes };
  }
  const records: (IndexRecord | undefined)[] = [];
  let count = 0;
  try {
    const view = await viewIndex(index, indexPath);
    count = view.count;
    for (let from = 0; from < count; from += PAGE) {
      const n = Math.min(PAGE, count - from);
      const buffer = await readExactly(index, from * INDEX_RECORD_BYTES, n * INDEX_RECORD_BYTES, indexPath);
      for (let i = 0; i < n; i++) {
        const r = decodeIndexRecord(buffer, i * INDEX_RECORD_BYTES);
        if (typeof r === 'string') problems.push({ file: INDEX_FILE, offset: (from + i) * INDEX_RECORD_BYTES, message: `${r} (position ${from + i})` });
        records.push(typeof r === 'string' ? undefined : r);
      }
    }
    const complete = Math.floor(view.size / INDEX_RECORD_BYTES);
    if (view.size > count * INDEX_RECORD_BYTES) {
      const tail = await readExactly(index, count * INDEX_RECORD_BYTES, view.size - count * INDEX_RECORD_BYTES, indexPath);
      for (let i = 0; i < complete - count; i++) {
        const r = decodeIndexRecord(tail, i * INDEX_RECORD_BYTES);
        if (typeof r === 'string' && !tail.subarray(i * INDEX_RECORD_BYTES, (i + 1) * INDEX_RECORD_BYTES).includes(0)) {
          problems.push({ file: INDEX_FILE, offset: (count + i) * INDEX_RECORD_BYTES, message: `${r} (position ${count + i}, after the last commit mark): changed after it was written` });
        }
      }
      notes.push({ file: INDEX_FILE, offset: count * INDEX_RECORD_BYTES, message: `${view.size - count * INDEX_RECORD_BYTES} bytes after the last commit mark: an unfinished commit` });
    }
  } finally {
    await index.close();
  }
  const matched = new Array<boolean>(count).fill(false);
  const committedEnds = new Map<string, number>();
  for (const r of records) if (r) committedEnds.set(r.fileHash, Math.max(committedEnds.get(r.fileHash) ?? 0, r.offset + r.length + 1));
  let deletions: Deletions = NO_DELETIONS;
  try {
    deletions = await readDeletions(fs, dir);
  } catch (e) {
    problems.push({ file: DELETIONS_FILE, offset: isStoreCorruptError(e) ? e.offset : 0, message: e instanceof Error ? e.message : String(e) });
  }
  if (deletions.size > deletions.validEnd) notes.push({ file: DELETIONS_FILE, offset: deletions.validEnd, message: 'a torn last line: a deletion that never committed (cut at the next writable open)' });
  if (deletions.byHash.size > 0) notes.push({ file: DELETIONS_FILE, offset: 0, message: `${deletions.byHash.size} deleted (archived) stream${deletions.byHash.size === 1 ? '' : 's'}: their index records are skipped` });
  const byHash = new Set<string>();
  for (const name of names) {
    const hash = hashOfFileName(name)!;
    if (deletions.byHash.has(hash)) {
      notes.push({ file: `${STREAMS_DIR}/${name}`, offset: 0, message: 'the file of a deleted stream (a crash interrupted its deletion): removed at the next writable open' });
      continue;
    }
    byHash.add(hash);
    await checkStreamFile(fs, join(streamsDir, name), `${STREAMS_DIR}/${name}`, hash, committedEnds.get(hash) ?? 0, records, matched, count, problems, notes);
  }
  records.forEach((r, pos) => {
    if (!r || matched[pos] || deletions.byHash.has(r.fileHash)) return;
    const message = byHash.has(r.fileHash)
      ? `record of position ${pos} points at byte ${r.offset} of a stream file that holds no matching line there`
      : `record of position ${pos} points into a stream file that does not exist (hash ${r.fileHash})`;
    problems.push({ file: INDEX_FILE, offset: pos * INDEX_RECORD_BYTES, message });
  });
  const journal = await fs.open(join(dir, JOURNAL_FILE), 'read').catch(() => undefined);
  if (journal) {
    try {
      const { records: journaled, end } = await readJournal(journal);
      const size = await journal.size();
      if (journaled.length > 0) notes.push({ file: JOURNAL_FILE, offset: 0, message: `${journaled.length} group-commit records not yet checkpointed (replayed at the next writable open)` });
      if (end < size) notes.push({ file: JOURNAL_FILE, offset: end, message: `${size - end} bytes after the last whole journal record (an unfinished journal write)` });
    } finally {
      await journal.close();
    }
  }
  // the session catalog against a fold of the log, on a store with nothing else wrong (damage elsewhere is the finding)
  if (problems.length === 0) problems.push(...(await checkJsonlCatalog(dir, fs)));
  return { ok: problems.length === 0, directory: dir, events: count, streams: names.length, problems, notes };
};

const checkStreamFile = async (
  fs: FsOps,
  path: string,
  file: string,
  hash: string,
  committedEnd: number,
  records: readonly (IndexRecord | undefined)[],
  matched: boolean[],
  count: number,
  problems: StoreFinding[],
  notes: StoreFinding[],
): Promise<void> => {
  const handle = await fs.open(path, 'read');
  try {
    const size = await handle.size();
    if (size < committedEnd) problems.push({ file, offset: size, message: `the file ends at byte ${size}; the index needs it to reach byte ${committedEnd}` });
    let first = true;
    let rev = 0;
    let end = 0;
    for await (const line of forwardLines(handle, 0, size)) {
      end = line.offset + line.bytes.length + 1;
      const inCommitted = end <= committedEnd;
      const decoded = decodeLine(line.bytes);
      if (first) {
        first = false;
        if (typeof decoded === 'string' || decoded.kind !== 'header') {
          problems.push({ file, offset: 0, message: typeof decoded === 'string' ? `header: ${decoded}` : 'the first line is not a header' });
          return;
        }
        if (streamFileName(decoded.stream).hash !== hash) problems.push({ file, offset: 0, message: `the file name does not match its stream ${JSON.stringify(decoded.stream)}` });
        continue;
      }
      if (typeof decoded === 'string' || decoded.kind !== 'event') {
        const message = typeof decoded === 'string' ? decoded : 'a header line in the middle of the file';
        if (inCommitted) problems.push({ file, offset: line.offset, message });
        else notes.push({ file, offset: line.offset, message: `${message} (after the committed part: an unfinished commit)` });
        continue;
      }
      const e = decoded.event;
      const r = e.pos < count ? records[e.pos] : undefined;
      const pointsHere = r !== undefined && r.fileHash === hash && r.offset === line.offset && r.length === line.bytes.length;
      if (pointsHere && r.lineCrc === decoded.crc) {
        matched[e.pos] = true;
        if (e.rev !== rev) problems.push({ file, offset: line.offset, message: `revision ${e.rev}, expected ${rev}` });
        rev = e.rev + 1;
        continue;
      }
      if (pointsHere) problems.push({ file, offset: line.offset, message: `the line's checksum differs from the one the index's record of position ${e.pos} holds` });
      else if (inCommitted) problems.push({ file, offset: line.offset, message: `line of position ${e.pos} inside the committed part has no index record pointing at it` });
      else if (e.g !== undefined && e.g > count) {
        problems.push({ file, offset: line.offset, message: `line of position ${e.pos} belongs to a commit that started at position ${e.g}, past the index's ${count} committed records: the index lost records` });
      } else notes.push({ file, offset: line.offset, message: `line of position ${e.pos} is not committed (an unfinished or abandoned commit)` });
    }
    if (first && size > 0) problems.push({ file, offset: 0, message: 'the file has no complete header line' });
    if (end < size) notes.push({ file, offset: end, message: `${size - end} bytes of a torn last line` });
  } finally {
    await handle.close();
  }
};
