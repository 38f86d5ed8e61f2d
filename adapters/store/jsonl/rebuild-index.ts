import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { StoreCorruptError, StoreIoError } from '../../../runtime/ports/store-errors.js';
import { DirectoryLock } from './dir-lock.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { nodeFsOps, type FsOps } from './fs-ops.js';
import { encodeIndexRecords, INDEX_FILE } from './global-index.js';
import { decodeLine, type IndexRecord } from './line-codec.js';
import { quarantineFile } from './quarantine.js';
import { readDeletions } from './deletions.js';
import { retiredCounts, retiredRecords, type RetiredReport, type UnmarkedRecord } from './rebuild-retired.js';
import { STREAMS_DIR } from './store-directory.js';
import { forwardLines } from './stream-file.js';

/** What `rebuildJsonlIndex` wrote. */
export interface RebuildReport {
  readonly events: number;
  readonly streams: number;
  /** Where the previous index was moved (relative to the store directory), when there was one. */
  readonly previousIndex?: string;
  /** Present when the deletion log names deleted (archived) streams: the positions their events keep retired. */
  readonly retired?: RetiredReport;
}

interface Located {
  readonly record: UnmarkedRecord;
  readonly file: string;
  readonly g: number | undefined;
}

/** Options of rebuildJsonlIndex. */
export interface RebuildOptions {
  /** @defaultValue node:fs */
  readonly fs?: FsOps;
  /** @defaultValue 30_000 */
  readonly lockTimeoutMs?: number;
  /** fsync the new index and the directory (false only for throwaway stores in tests). @defaultValue true */
  readonly sync?: boolean;
}

/**
 * Rebuilds `global.idx` from the stream files, whose lines carry their global positions. Refuses
 * (StoreCorruptError, nothing written) when a complete line does not decode, revisions are not dense, two lines
 * claim one position, the deletion log is damaged, or a position is missing that deleted streams do not account
 * for. A torn last line (no newline) is left out. Commit marks follow the lines' `g` (each run of positions with the
 * same commit start ends a commit; a line without one is its own commit). The old index is moved to the quarantine,
 * never deleted. Takes the directory lock.
 *
 * Deleted (archived) streams: the events of each stream the deletion log names keep their positions retired, as
 * many as it had (its revision + 1), so every other event keeps its global position, readers skip them and the ids
 * stay deleted. They are the positions no line holds: exactly that many must be missing. Their records are the
 * previous index's when it still has them, intact, at every such position (see {@link RetiredReport}).
 *
 * The rebuild cannot tell an unfinished last commit (a crash's leftover lines) from a finished one: it indexes
 * every line it finds.
 */
export const rebuildJsonlIndex = async (dir: string, options: RebuildOptions = {}): Promise<RebuildReport> => {
  const fs = options.fs ?? nodeFsOps;
  const sync = options.sync ?? true;
  const streamsDir = join(dir, STREAMS_DIR);
  const names = await fs.readdir(streamsDir).catch((e: unknown) => {
    throw new StoreIoError('rebuild', { cause: e });
  });
  const lock = new DirectoryLock(dir, options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs });
  await lock.acquire();
  try {
    const deletions = await readDeletions(fs, dir);
    const byPos = new Map<number, Located>();
    const linesOfDeleted = new Map<string, { file: string; lines: number }>();
    let streams = 0;
    for (const name of names) {
      const hash = hashOfFileName(name);
      if (hash === undefined) continue;
      streams++;
      const file = `${STREAMS_DIR}/${name}`;
      const handle = await fs.open(join(streamsDir, name), 'read');
      try {
        let rev = -1;
        for await (const line of forwardLines(handle, 0, await handle.size())) {
          const decoded = decodeLine(line.bytes);
          if (typeof decoded === 'string') throw new StoreCorruptError(file, line.offset, `${decoded}: cannot rebuild past a damaged line`);
          if (rev === -1) {
            if (decoded.kind !== 'header') throw new StoreCorruptError(file, 0, 'the first line is not a header', 1);
            if (streamFileName(decoded.stream).hash !== hash) throw new StoreCorruptError(file, 0, `the file name does not match its stream ${JSON.stringify(decoded.stream)}`, 1);
            rev = 0;
            continue;
          }
          if (decoded.kind !== 'event') throw new StoreCorruptError(file, line.offset, 'a header line in the middle of the file');
          const e = decoded.event;
          if (e.rev !== rev) throw new StoreCorruptError(file, line.offset, `revision ${e.rev}, expected ${rev}`);
          rev++;
          const other = byPos.get(e.pos);
          if (other) throw new StoreCorruptError(file, line.offset, `position ${e.pos} is claimed by this line and by ${other.file} at byte ${other.record.offset}: positions conflict`);
          byPos.set(e.pos, { record: { fileHash: hash, offset: line.offset, length: line.bytes.length, lineCrc: decoded.crc }, file, g: e.g });
        }
        // the file of a deleted stream a crash left behind: its lines are indexed (readers skip them), and counted
        if (deletions.byHash.has(hash)) linesOfDeleted.set(hash, { file, lines: Math.max(rev, 0) });
      } finally {
        await handle.close();
      }
    }
    const counts = retiredCounts(deletions, linesOfDeleted);
    const retiredCount = [...counts.values()].reduce((a, b) => a + b, 0);
    const n = byPos.size + retiredCount;
    const gaps: number[] = [];
    for (let p = 0; p < n; p++) if (!byPos.has(p)) gaps.push(p);
    if (gaps.length !== retiredCount) {
      // some line claims a position at or past n: positions are missing that no deleted stream accounts for
      const p = gaps[retiredCount]!;
      const beyond = [...byPos.keys()].filter((q) => q >= n).sort((a, b) => a - b)[0];
      const deleted = retiredCount === 0 ? '' : ` (${retiredCount} are the events of deleted streams, ${gaps.length} positions have no line)`;
      throw new StoreCorruptError(join(dir, INDEX_FILE), p * 80, `no stream line holds position ${p} (a line claims position ${beyond})${deleted}: lines or a stream file are missing`);
    }
    const retired = await retiredRecords(fs, dir, gaps, counts);
    // each position's commit: a line's g (a line without one is its own); a retired position is in the commit of the
    // next line when that commit started at or before it, else its own
    const commitOf = new Array<number>(n);
    let nextG: number | undefined;
    for (let p = n - 1; p >= 0; p--) {
      const here = byPos.get(p);
      if (here) {
        nextG = here.g;
        commitOf[p] = here.g ?? -1 - p;
      } else commitOf[p] = nextG !== undefined && nextG <= p ? nextG : -1 - p;
    }
    const records: IndexRecord[] = [];
    for (let p = 0; p < n; p++) {
      const record = byPos.get(p)?.record ?? retired.records.get(p)!;
      records.push({ ...record, batchEnd: p === n - 1 || commitOf[p + 1] !== commitOf[p] });
    }
    const indexPath = join(dir, INDEX_FILE);
    const tmp = `${indexPath}.rebuild-${randomBytes(4).toString('hex')}`;
    const out = await fs.open(tmp, 'create');
    try {
      await out.write(encodeIndexRecords(records), 0);
      if (sync) await out.sync();
    } finally {
      await out.close();
    }
    let previousIndex: string | undefined;
    if ((await fs.sizeOf(indexPath)) !== undefined) {
      const before = new Set(await fs.readdir(join(dir, 'quarantine')).catch(() => [] as string[]));
      await quarantineFile({ fs, dir, sync }, indexPath, 'replaced by store repair --rebuild-index');
      previousIndex = (await fs.readdir(join(dir, 'quarantine'))).find((x) => !before.has(x) && x.includes(INDEX_FILE));
    }
    await fs.link(tmp, indexPath);
    if (sync) await fs.syncDir(dir);
    await fs.unlink(tmp);
    if (sync) await fs.syncDir(dir);
    return {
      events: n,
      streams,
      ...(previousIndex ? { previousIndex: join('quarantine', previousIndex) } : {}),
      ...(deletions.byHash.size > 0 ? { retired: { events: retiredCount, streams: deletions.byHash.size, attribution: retired.attribution } } : {}),
    };
  } finally {
    lock.dispose();
  }
};
