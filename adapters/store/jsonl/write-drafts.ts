import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { StoreIoError } from '../../../runtime/ports/store-errors.js';
import { isErrnoCode, type FileOps } from './fs-ops.js';
import { encodeIndexRecordsSliced } from './global-index.js';
import { encodeJournalRecordSliced } from './group-journal.js';
import { WorkSlices } from '../shared/work-slices.js';
import { encodeHeaderLine, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';
import type { StoreDirectory } from './store-directory.js';
import type { StreamCache, StreamState } from './stream-cache.js';

/** The lines a commit adds to one stream, with the ids and global positions they take. */
export interface Draft {
  readonly state: StreamState;
  readonly lines: Buffer[];
  readonly newIds: Map<string, number>;
  readonly newPositions: number[];
  lastRevision: number;
  bytes: number;
}

/**
 * A write failed after its index (or journal) record was written, and undoing it failed too: whether the batch
 * counts as committed is decided by the next recovery, so the append's outcome is unknown.
 */
export class UncertainCommitError extends StoreIoError {
  constructor(cause: unknown) {
    super('append (rollback failed after the index record was written; recovery decides whether the batch commits)', { cause });
  }
}

/** A checkpoint (fsync the journaled stream files, empty the journal) runs once the journal is this large. */
const JOURNAL_LIMIT = 8 * 1024 * 1024;
/** Larger groups fsync each stream file instead of copying their lines into the journal. */
const JOURNAL_RECORD_LIMIT = 4 * 1024 * 1024;

const crcOf = (line: Buffer): number => Number.parseInt(line.toString('latin1', 6, 14), 16);

/**
 * Writes every draft's lines, then the index records; fsyncs per the durability mode; rolls back on failure. The
 * index records and the journal record (every line of the group again, in base64) are encoded in slices of `sliceMs`
 * (`WorkSlices`), so a large group does not hold the event loop for the whole encoding. @param sliceMs default: no
 * slicing
 */
export const writeDrafts = async (directory: StoreDirectory, cache: StreamCache, drafts: Draft[], indexCount: number, sliceMs = Infinity): Promise<void> => {
  const sync = directory.durability !== 'none';
  const numbered: { pos: number; record: IndexRecord }[] = [];
  const pieces = drafts.map((d) => {
    const headerBytes = d.state.exists ? undefined : encodeHeaderLine(d.state.stream).bytes;
    let offset = d.state.exists ? d.state.size : headerBytes!.length;
    d.lines.forEach((line, i) => {
      numbered.push({ pos: d.newPositions[i]!, record: { fileHash: d.state.hash, offset, length: line.length - 1, lineCrc: crcOf(line), batchEnd: false } });
      offset += line.length;
    });
    // the draft's lines in one buffer: the stream file gets it, and the journal record a copy of it
    return { draft: d, headerBytes, headerEnd: headerBytes?.length ?? d.state.headerEnd, end: offset, body: Buffer.concat(d.lines) };
  });
  // Index records in global-position order (appends of one group interleave streams); the group's last record
  // carries the batch-end mark: the whole group commits or none of it does.
  numbered.sort((a, b) => a.pos - b.pos);
  const records = numbered.map((n, i) => (i === numbered.length - 1 ? { ...n.record, batchEnd: true } : n.record));
  const created: { path: string; tmp: string; linked: boolean }[] = [];
  const touched: { file: FileOps; size: number }[] = [];
  let indexTouched = false;
  // One fsync per commit (the journal's) makes the stream lines and index records durable, in `group` and `fsync`
  // mode alike: the stream files and the index are written without fsync and flushed at the next checkpoint.
  // (Until this changed, `fsync` mode flushed each stream file and then the index: two flushes per commit.)
  const journaled = pieces.filter((p) => p.headerBytes === undefined);
  const useJournal = sync && journaled.reduce((n, p) => n + p.end - p.draft.state.size, 0) <= JOURNAL_RECORD_LIMIT;
  const slices = new WorkSlices(sliceMs);
  const indexBytes = await encodeIndexRecordsSliced(records, slices);
  let journalStart = -1;
  let journalEnd = -1;
  try {
    if (useJournal) {
      const size = await directory.journal.size();
      if (size !== directory.journalKnownSize || size > JOURNAL_LIMIT) await directory.checkpoint();
      journalStart = directory.journalKnownSize;
    }
    // Before any stream byte: which files this commit touches (commit-intent.ts), so that opening the store after a
    // crash checks those, not every file.
    const tmpOf = new Map(pieces.filter((p) => p.headerBytes !== undefined).map((p) => [p.draft, `${p.draft.state.path}.tmp-${randomBytes(6).toString('hex')}`] as const));
    await directory.intents.write({ g: indexCount, files: pieces.map((p) => p.draft.state.fileName), temporary: [...tmpOf.values()].map((t) => basename(t)) });
    // allSettled, not all: the rollback must not start while another file's write is still in flight.
    const written = await Promise.allSettled(
      pieces.map(async ({ draft, headerBytes, body }) => {
        if (headerBytes) {
          const tmp = tmpOf.get(draft)!;
          const entry = { path: draft.state.path, tmp, linked: false };
          created.push(entry);
          const file = await directory.fs.open(tmp, 'create');
          try {
            await file.write(Buffer.concat([headerBytes, body]), 0);
            if (sync) await file.sync();
          } finally {
            await file.close();
          }
          await directory.fs.link(tmp, draft.state.path);
          entry.linked = true;
          await directory.fs.unlink(tmp);
        } else {
          const file = await directory.writeHandle(draft.state.path);
          touched.push({ file, size: draft.state.size });
          await file.write(body, draft.state.size);
          if (sync && !useJournal) await file.sync();
        }
      }),
    );
    const failed = written.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    if (created.length > 0 && sync) await directory.fs.syncDir(directory.streamsDir);
    if (useJournal) {
      const record = await encodeJournalRecordSliced(
        {
          streams: journaled.map((p) => ({ file: p.draft.state.fileName, offset: p.draft.state.size, bytes: p.body })),
          index: { first: indexCount, bytes: indexBytes },
        },
        slices,
      );
      journalEnd = journalStart + record.length;
      // before the write: a name too many (the write then fails and is rolled back) costs one needless fsync
      for (const p of journaled) directory.journaledFiles.add(p.draft.state.fileName);
      await directory.journal.write(record, journalStart);
      await directory.journal.sync();
    }
    indexTouched = true;
    await directory.indexWrite.write(indexBytes, indexCount * INDEX_RECORD_BYTES);
    if (sync && !useJournal) await directory.indexWrite.sync();
    directory.lastIndexSize = (indexCount + records.length) * INDEX_RECORD_BYTES;
    if (useJournal) directory.journalKnownSize = journalEnd;
  } catch (e) {
    const cause = e;
    try {
      if (indexTouched) {
        await directory.indexWrite.truncate(indexCount * INDEX_RECORD_BYTES);
        if (sync) await directory.indexWrite.sync();
      }
      if (journalEnd >= 0) {
        directory.journalKnownSize = -1;
        await directory.journal.truncate(journalStart);
        await directory.journal.sync();
        directory.journalKnownSize = journalStart;
      }
      for (const t of touched) {
        await t.file.truncate(t.size);
        if (sync) await t.file.sync();
      }
      for (const c of created) {
        if (c.linked) await directory.fs.unlink(c.path);
        await directory.fs.unlink(c.tmp).catch((err: unknown) => {
          if (!isErrnoCode(err, 'ENOENT')) throw err;
        });
      }
      if (created.length > 0 && sync) await directory.fs.syncDir(directory.streamsDir);
    } catch (rollback) {
      const both = new AggregateError([cause, rollback]);
      // Once index records (or the journal record) were written, recovery may find the batch complete and keep it.
      if (indexTouched || journalEnd >= 0) throw new UncertainCommitError(both);
      throw new StoreIoError('append (rollback failed too; the next writer cuts what is left)', { cause: both });
    }
    throw new StoreIoError('append', { cause });
  }
  for (const p of pieces) {
    const s = p.draft.state;
    if (!s.exists) {
      s.exists = true;
      s.headerEnd = p.headerEnd;
      cache.fileOfHash.set(s.hash, s.fileName);
      cache.streamOfHash.set(s.hash, s.stream);
    }
    s.size = p.end;
    s.validAt = indexCount + records.length;
    s.lastRevision = p.draft.lastRevision;
    cache.readHints.set(s.stream, { rev: s.lastRevision + 1, offset: s.size });
    s.positions.push(...p.draft.newPositions);
    for (const [id, rev] of p.draft.newIds) s.ids.set(id, rev);
  }
};
