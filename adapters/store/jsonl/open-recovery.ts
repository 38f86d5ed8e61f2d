import { join } from 'node:path';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { isErrnoCode, type FileOps } from './fs-ops.js';
import { INDEX_FILE, readExactly, readIndexRecords, viewIndex } from './global-index.js';
import { readIntent, type CommitIntent } from './commit-intent.js';
import { JOURNAL_FILE, readJournal, replayJournalIndex, replayJournalStreams, type JournalRecord } from './group-journal.js';
import { assertCrashTail, surveyIndex, type FileCommitted } from './index-survey.js';
import { decodeIndexRecord, decodeLine, INDEX_RECORD_BYTES } from './line-codec.js';
import { DELETIONS_FILE } from './deletions.js';
import { quarantineFile } from './quarantine.js';
import { assertCrashLeftover, committedTail, headerOf, streamOfFile, type IndexLookup } from './recovery.js';
import { io, type StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';
import { forwardLines } from './stream-file.js';
import { recoverIndex } from './writer-state.js';

/**
 * Crash recovery, run at open under the directory lock: writes back what the group journal holds, then checks
 * the whole directory against the index (verifyDirectory) and cuts only what a crash can leave — records after
 * the index's last commit mark, and stream lines of the one unfinished commit — after moving those bytes to the
 * quarantine. Anything else that does not add up is refused with StoreCorruptError, and nothing is touched.
 */
export const recoverDirectory = async (directory: StoreDirectory, cache: StreamCache): Promise<void> => {
  const context = directory.journalContext();
  const journaled = await io('open', () => replayJournalIndex(context));
  const view = await io('open', () => viewIndex(directory.indexWrite, directory.indexPath));
  await io('open', () => assertCrashTail(directory.indexWrite, directory.indexPath, view));
  const index: IndexLookup = { file: directory.indexRead, path: directory.indexPath, view };
  await io('open', () => replayJournalStreams(context, journaled, index));
  // Everything is checked before anything is cut: a refusal leaves every byte where it was.
  const plan = await verifyOpen(directory, cache, index, await io('open', () => journalRecords(directory)));
  await recoverIndex(directory);
  await io('open', () => directory.checkpoint());
  for (const name of plan.deleted) {
    // a crash between the deletion log's fsync and the file's removal: finish the deletion
    await io('open', () => directory.fs.unlink(join(directory.streamsDir, name)));
  }
  if (plan.deleted.length > 0 && directory.durability !== 'none') await io('open', () => directory.fs.syncDir(directory.streamsDir));
  const deletions = directory.deletions;
  if (deletions.size > deletions.validEnd) {
    const path = join(directory.dir, DELETIONS_FILE);
    const file = await io('open', () => directory.fs.open(path, 'update'));
    try {
      await directory.cut(file, path, deletions.validEnd, 'a torn last line of the deletion log: a deletion that never committed', 'open');
    } finally {
      await file.close();
    }
    directory.deletions = { ...deletions, size: deletions.validEnd };
  }
  for (const tmp of plan.temporary) {
    await io('open', () => quarantineFile(directory.quarantineTarget(), join(directory.streamsDir, tmp), 'temporary file of a stream creation that never finished'));
  }
  for (const f of plan.files) {
    if (f.committedEnd >= f.size) continue;
    const path = join(directory.streamsDir, f.name);
    const file = await io('open', () => directory.fs.open(path, 'update'));
    try {
      await directory.cut(file, path, f.committedEnd, `stream lines after the last committed one (the index holds ${view.count} records): an unfinished commit`, 'open');
    } finally {
      await file.close();
    }
  }
  await directory.trimWriteHandles();
  // A store without an intent was checked whole: every commit so far is settled, and the next open need check only
  // what later commits name. (An existing intent stays: its files are checked again at each open, which is cheap,
  // and its position tells an index that lost whole commits — see verifyOpen.)
  if (plan.intent === undefined) await io('open', () => directory.intents.write({ g: view.count, files: [], temporary: [] }));
};

/**
 * Opening read-only: the same checks as recovery, nothing written. Returns what a writable open would repair and a
 * reader leaves alone (one line each): an unfinished commit's bytes after the index's last commit mark or after a
 * stream file's committed part, temporary files of an interrupted stream creation, a torn last line of the deletion
 * log (a deletion that never committed), and group-journal commits the
 * index does not hold (a power loss between the journal's fsync and the index write). None of it is read.
 */
export const verifyReadOnly = async (directory: StoreDirectory, cache: StreamCache): Promise<readonly string[]> => {
  // Writers may be committing meanwhile: a finding is only believed once the index stood still across it.
  for (let attempt = 0; ; attempt++) {
    const view = await io('open', () => viewIndex(directory.indexRead, directory.indexPath));
    try {
      await io('open', () => assertCrashTail(directory.indexRead, directory.indexPath, view));
      const journal = await io('open', () => journalRecords(directory));
      const plan = await verifyOpen(directory, cache, { file: directory.indexRead, path: directory.indexPath, view }, journal);
      return [...leftovers(view, plan), ...tornDeletion(directory), ...(await unreplayedJournal(directory, view.count))];
    } catch (e) {
      const now = await io('open', () => directory.fs.sizeOf(directory.indexPath));
      if (attempt >= 4 || now === view.size) throw e;
    }
  }
};

const leftovers = (view: { readonly count: number; readonly size: number }, plan: { readonly files: readonly FilePlan[]; readonly temporary: readonly string[] }): string[] => {
  const out: string[] = [];
  const tail = view.size - view.count * INDEX_RECORD_BYTES;
  if (tail > 0) out.push(`${INDEX_FILE}: ${tail} bytes after the last commit mark (an unfinished commit), not read`);
  for (const f of plan.files) {
    if (f.committedEnd < f.size) out.push(`streams/${f.name}: ${f.size - f.committedEnd} bytes after its last committed line (an unfinished commit), not read`);
  }
  for (const t of plan.temporary) out.push(`streams/${t}: the temporary file of a stream creation that never finished, not read`);
  return out;
};

/** A torn last line of the deletion log (a deletion that never committed): a writable open cuts it, a reader skips it. */
const tornDeletion = (directory: StoreDirectory): string[] => {
  const { size, validEnd } = directory.deletions;
  return size > validEnd ? [`${DELETIONS_FILE}: ${size - validEnd} bytes after its last whole line (a deletion that never committed), not read`] : [];
};

/** Journal records whose index records the index does not hold (abandoned ones, which a later commit overlaps, aside). */
const unreplayedJournal = async (directory: StoreDirectory, committed: number): Promise<string[]> => {
  // no journal: nothing pending; a journal that cannot be read is a failure to read (store-io), never "nothing pending"
  const journal = await io('open', () =>
    directory.fs.open(join(directory.dir, JOURNAL_FILE), 'read').catch((e: unknown) => {
      if (isErrnoCode(e, 'ENOENT')) return undefined;
      throw e;
    }),
  );
  if (journal === undefined) return [];
  try {
    const { records } = await io('open', () => readJournal(journal));
    const ends = records.map((r) => r.index.first + r.index.bytes.length / INDEX_RECORD_BYTES);
    const pending = records.filter((r, i) => ends[i]! > committed && !records.slice(i + 1).some((later) => later.index.first < ends[i]!));
    if (pending.length === 0) return [];
    return [`${JOURNAL_FILE}: ${pending.length} commit${pending.length === 1 ? '' : 's'} the index does not hold (a power loss?), not read: a writable open (steerlog store repair) replays them`];
  } finally {
    await journal.close();
  }
};

/** The group journal's records (none when it is missing): read-only opens do not replay them, but check their files. */
const journalRecords = async (directory: StoreDirectory): Promise<JournalRecord[]> => {
  const journal = await directory.fs.open(join(directory.dir, JOURNAL_FILE), 'read').catch((e: unknown) => {
    if (isErrnoCode(e, 'ENOENT')) return undefined;
    throw e;
  });
  if (journal === undefined) return [];
  try {
    return (await readJournal(journal)).records;
  } finally {
    await journal.close();
  }
};

/**
 * What opening checks: with a commit intent (commit-intent.ts), only what the last unfinished commit can have
 * touched — the files the intent names, the files of the index records after the last commit mark, the files the
 * group journal names, the file of the last deletion — so the time to open does not grow with the number of
 * streams; every other stream file is checked when it is first read (its committed tail against the index, as
 * every read does), and `store check` still checks everything. Without an intent (a store written before it
 * existed, or a torn intent), every file, as verifyDirectory always did.
 */
export const verifyOpen = async (
  directory: StoreDirectory,
  cache: StreamCache,
  index: IndexLookup,
  journal: readonly JournalRecord[],
): Promise<{ files: FilePlan[]; temporary: string[]; deleted: string[]; intent?: CommitIntent }> => {
  const intent = await io('open', () => readIntent(directory.dir));
  // No intent, or one whose commit started past the index's end (the index lost whole commits — damage, or a
  // power loss in `none` mode): every file is checked, which refuses what a lost commit left in any of them.
  if (intent === undefined || intent.g > index.view.count) return verifyDirectory(directory, cache, index);
  await io('open', () => directory.refreshDeletions());
  const names = new Set<string>(intent.files);
  for (const r of journal) for (const e of r.streams) names.add(e.file);
  for (const hash of await io('open', () => tailHashes(directory, index))) {
    const name = await cache.fileNameOf(hash).catch(() => undefined);
    if (name === undefined) throw new StoreCorruptError(index.path, index.view.count * INDEX_RECORD_BYTES, `a record after the last commit mark points into a stream file that does not exist (hash ${hash})`);
    names.add(name);
  }
  const lastDeletion = [...directory.deletions.byHash.values()].at(-1);
  if (lastDeletion) names.add(streamFileName(lastDeletion.stream).fileName);
  const files: FilePlan[] = [];
  const deleted: string[] = [];
  for (const name of names) {
    const hash = hashOfFileName(name);
    if (hash === undefined) continue;
    const path = join(directory.streamsDir, name);
    if ((await io('open', () => directory.fs.sizeOf(path))) === undefined) continue; // not created yet, or removed
    if (directory.isDeleted(hash)) {
      deleted.push(name);
      continue;
    }
    cache.fileOfHash.set(hash, name);
    const file = await io('open', () => directory.fs.open(path, 'read'));
    try {
      const size = await io('open', () => file.size());
      const stream = await streamOfFile(file, name);
      if (streamFileName(stream).hash !== hash) throw new StoreCorruptError(name, 0, `file name does not match its stream ${JSON.stringify(stream)}`, 1);
      cache.streamOfHash.set(hash, stream);
      const tail = await committedTail(file, name, size, stream, hash, index);
      const committed = tail.lastPosition < 0 ? undefined : await io('open', () => lastRecordInto(index, hash, tail.lastPosition));
      files.push({ name, size, committedEnd: await checkStreamFile(file, name, size, committed, index.view.count) });
    } finally {
      await file.close();
    }
  }
  const temporary: string[] = [];
  for (const t of intent.temporary) if ((await io('open', () => directory.fs.sizeOf(join(directory.streamsDir, t)))) !== undefined) temporary.push(t);
  return { files, temporary, deleted, intent };
};

/** File hashes of the whole records after the index's last commit mark (an unfinished commit's). */
const tailHashes = async (directory: StoreDirectory, index: IndexLookup): Promise<Set<string>> => {
  const complete = Math.floor(index.view.size / INDEX_RECORD_BYTES);
  const hashes = new Set<string>();
  if (complete <= index.view.count) return hashes;
  const buffer = await readExactly(index.file, index.view.count * INDEX_RECORD_BYTES, (complete - index.view.count) * INDEX_RECORD_BYTES, index.path);
  for (let i = 0; i < complete - index.view.count; i++) {
    const r = decodeIndexRecord(buffer, i * INDEX_RECORD_BYTES);
    if (typeof r !== 'string') hashes.add(r.fileHash);
  }
  return hashes;
};

/** The last committed index record pointing into the file of `hash`, at or after `from` (whose record does). */
const lastRecordInto = async (index: IndexLookup, hash: string, from: number): Promise<FileCommitted> => {
  let lastPos = from;
  let [record] = await readIndexRecords(index.file, index.path, from, 1);
  const PAGE = 4096;
  for (let p = from + 1; p < index.view.count; p += PAGE) {
    const records = await readIndexRecords(index.file, index.path, p, Math.min(PAGE, index.view.count - p));
    records.forEach((r, i) => {
      if (r.fileHash === hash) {
        lastPos = p + i;
        record = r;
      }
    });
  }
  return { lastPos, record: record!, end: record!.offset + record!.length + 1, count: 0 };
};

/** One stream file as the index sees it. */
export interface FilePlan {
  readonly name: string;
  readonly size: number;
  /** Where its committed part ends: bytes after it are the unfinished commit of a crash. */
  readonly committedEnd: number;
}

/**
 * Checks every stream file against the index: each file the index points into exists, holds the stream its name
 * says, is at least as long as the index needs, and its last committed line is the one the index records
 * (same offset, length and checksum); what follows it is only what a crash can leave.
 */
export const verifyDirectory = async (
  directory: StoreDirectory,
  cache: StreamCache,
  index: IndexLookup,
): Promise<{ files: FilePlan[]; temporary: string[]; deleted: string[] }> => {
  await io('open', () => directory.refreshDeletions());
  const survey = await io('open', () => surveyIndex(index.file, index.path, index.view.count));
  const names = await io('open', () => directory.fs.readdir(directory.streamsDir));
  const files: FilePlan[] = [];
  const temporary: string[] = [];
  const deleted: string[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    if (name.includes('.tmp-')) {
      temporary.push(name);
      continue;
    }
    const hash = hashOfFileName(name);
    if (hash === undefined) continue;
    if (directory.isDeleted(hash)) {
      deleted.push(name); // deleted (the deletion log says so); its file outlived a crash
      continue;
    }
    seen.add(hash);
    cache.fileOfHash.set(hash, name);
    const file = await io('open', () => directory.fs.open(join(directory.streamsDir, name), 'read'));
    try {
      const size = await io('open', () => file.size());
      const stream = await streamOfFile(file, name);
      if (streamFileName(stream).hash !== hash) throw new StoreCorruptError(name, 0, `file name does not match its stream ${JSON.stringify(stream)}`, 1);
      cache.streamOfHash.set(hash, stream);
      const committedEnd = await checkStreamFile(file, name, size, survey.get(hash), index.view.count);
      files.push({ name, size, committedEnd });
    } finally {
      await file.close();
    }
  }
  for (const [hash, f] of survey) {
    if (!seen.has(hash) && !directory.isDeleted(hash)) {
      throw new StoreCorruptError(index.path, f.lastPos * 80, `index records (${f.count}, the last at position ${f.lastPos}) point into a stream file that does not exist (hash ${hash})`, f.lastPos + 1);
    }
  }
  return { files, temporary, deleted };
};

const checkStreamFile = async (file: FileOps, name: string, size: number, committed: FileCommitted | undefined, count: number): Promise<number> => {
  const headerEnd = await headerOf(file, name, undefined);
  let end = headerEnd;
  if (committed) {
    const { record, lastPos } = committed;
    if (size < committed.end) {
      throw new StoreCorruptError(name, size, `the file ends at byte ${size}, but the index's record of position ${lastPos} needs it to reach byte ${committed.end}: committed lines are missing`);
    }
    if (record.offset < headerEnd) throw new StoreCorruptError(name, record.offset, `the index's record of position ${lastPos} points into the header line`);
    const bytes = await io('open', () => readExactly(file, record.offset, record.length + 1, name));
    const decoded = bytes[record.length] === 0x0a ? decodeLine(bytes.subarray(0, record.length)) : 'no line ends where the index record says';
    if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.crc !== record.lineCrc || decoded.event.pos !== lastPos) {
      const why = typeof decoded === 'string' ? decoded : decoded.kind !== 'event' ? 'a header line' : decoded.crc !== record.lineCrc ? 'a line with another checksum' : `the line of position ${decoded.event.pos}`;
      throw new StoreCorruptError(name, record.offset, `the index's record of position ${lastPos} points at ${why}`);
    }
    end = committed.end;
  }
  for await (const line of forwardLines(file, end, size)) {
    const decoded = decodeLine(line.bytes);
    if (typeof decoded === 'string') continue; // a damaged line of the unfinished commit (a power loss may leave one)
    if (decoded.kind !== 'event') throw new StoreCorruptError(name, line.offset, 'a header line after the committed part');
    assertCrashLeftover(name, { event: decoded.event, offset: line.offset, length: line.bytes.length, crc: decoded.crc }, count);
  }
  return end;
};
