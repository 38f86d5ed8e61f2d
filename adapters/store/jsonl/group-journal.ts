import { join } from 'node:path';
import { hashOfFileName } from './file-name.js';
import { isErrnoCode, type FileOps, type FsOps } from './fs-ops.js';
import { readExactly } from './global-index.js';
import { crc32, decodeLine, INDEX_RECORD_BYTES } from './line-codec.js';
import { isCommitted, type IndexLookup } from './recovery.js';
import { forwardLines } from './stream-file.js';
import type { WorkSlices } from '../shared/work-slices.js';

/**
 * The group journal `group.journal`: lets a group commit pay one fsync, whatever the number of stream files it
 * touches. In `group` mode a commit writes the stream lines (no fsync), appends a copy of them and of its index
 * records here and fsyncs this file — the durability point — then writes the index records (no fsync).
 * A checkpoint fsyncs every stream file the journal names and the index, then empties the journal. After a
 * power loss, opening the store writes back whatever the journal holds and the files lost, then checkpoints.
 *
 * One record per line:
 *   {"c":"<crc32 of the inner value>","j":{"s":[["<file name>",<offset>,"<base64 bytes>"],…],"i":[<first position>,"<base64 records>"]}}
 */
export const JOURNAL_FILE = 'group.journal';

export interface JournalEntry {
  readonly file: string;
  readonly offset: number;
  readonly bytes: Buffer;
}

const INNER_START = 20;

export interface JournalRecord {
  readonly streams: readonly JournalEntry[];
  /** The commit's index records, which start at global position `first`. */
  readonly index: { readonly first: number; readonly bytes: Buffer };
}

/** The bytes of a stream entry encoded between two looks at the slices: a multiple of 3 (whole base64 groups). */
const BASE64_PIECE_BYTES = 3 * 32 * 1024;

/**
 * `encodeJournalRecord`'s very bytes, built a stream entry at a time (a large entry in pieces of 96 KiB): between two
 * entries or pieces, once `slices` says a slice ran (`WorkSlices.due`), it lets the event loop run (a group commit's
 * record holds every line of the group in base64, a megabyte and more under load). The inner value is written as `JSON.stringify` writes it (the file name
 * through `JSON.stringify`, base64 needs no escapes) and checksummed in place, as a stream line is.
 */
export const encodeJournalRecordSliced = async (record: JournalRecord, slices?: WorkSlices): Promise<Buffer> => {
  const parts: Buffer[] = [Buffer.from('{"c":"00000000","j":{"s":[', 'latin1')];
  for (let i = 0; i < record.streams.length; i++) {
    if (slices?.due) await slices.pause();
    const e = record.streams[i]!;
    parts.push(Buffer.from(`${i > 0 ? ',' : ''}[${JSON.stringify(e.file)},${JSON.stringify(e.offset)},"`, 'utf8'));
    // one stream's lines (one large append: a megabyte and more) in pieces of whole 3-byte groups, whose base64
    // texts put together are the base64 of the whole (no padding but the last piece's)
    for (let at = 0; at < e.bytes.length; at += BASE64_PIECE_BYTES) {
      if (at > 0 && slices?.due) await slices.pause();
      parts.push(Buffer.from(e.bytes.toString('base64', at, Math.min(e.bytes.length, at + BASE64_PIECE_BYTES)), 'latin1'));
    }
    parts.push(Buffer.from('"]', 'latin1'));
  }
  parts.push(Buffer.from(`],"i":[${JSON.stringify(record.index.first)},"${record.index.bytes.toString('base64')}"]}}\n`, 'latin1'));
  if (slices?.due) await slices.pause();
  const bytes = Buffer.concat(parts);
  bytes.write(crc32(bytes, INNER_START, bytes.length - 2).toString(16).padStart(8, '0'), 6, 'latin1');
  return bytes;
};

/** One journal record line (see the file's comment), in one piece of work; `encodeJournalRecordSliced` writes the same bytes in slices. */
export const encodeJournalRecord = (record: JournalRecord): Buffer => {
  const inner = Buffer.from(
    JSON.stringify({
      s: record.streams.map((e) => [e.file, e.offset, e.bytes.toString('base64')]),
      i: [record.index.first, record.index.bytes.toString('base64')],
    }),
    'utf8',
  );
  const head = Buffer.from(`{"c":"${crc32(inner).toString(16).padStart(8, '0')}","j":`, 'ascii');
  return Buffer.concat([head, inner, Buffer.from('}\n', 'ascii')]);
};

/** The journal's valid records, in order, and the byte just after the last one (a torn tail is ignored). */
export const readJournal = async (file: FileOps): Promise<{ records: JournalRecord[]; end: number }> => {
  const records: JournalRecord[] = [];
  let end = 0;
  for await (const line of forwardLines(file, 0, await file.size())) {
    const b = line.bytes;
    if (b.length < INNER_START + 3 || b[b.length - 1] !== 0x7d) break;
    const m = /^\{"c":"([0-9a-f]{8})","j":$/.exec(b.toString('latin1', 0, INNER_START));
    if (!m || crc32(b, INNER_START, b.length - 1).toString(16).padStart(8, '0') !== m[1]) break;
    let parsed: unknown;
    try {
      parsed = JSON.parse(b.toString('utf8', INNER_START, b.length - 1));
    } catch {
      break;
    }
    const o = parsed as { s?: unknown; i?: unknown };
    if (typeof o !== 'object' || o === null || !Array.isArray(o.s) || !Array.isArray(o.i)) break;
    const [first, index] = o.i as [number, string];
    records.push({
      streams: (o.s as [string, number, string][]).map(([name, offset, data]) => ({ file: name, offset, bytes: Buffer.from(data, 'base64') })),
      index: { first, bytes: Buffer.from(index, 'base64') },
    });
    end = line.offset + b.length + 1;
  }
  return { records, end };
};

/** What journal maintenance needs from the store (all calls run under the directory lock). */
export interface JournalContext {
  readonly fs: FsOps;
  readonly journal: FileOps;
  /** The index, opened for writing. */
  readonly index: FileOps;
  readonly indexPath: string;
  readonly streamsDir: string;
  /** A (cached) read-write handle on a stream file. */
  writeHandle(path: string): Promise<FileOps>;
}

/**
 * fsyncs every stream file the journal names and the index, then empties the journal. `files`, when the caller knows
 * them (every file the journal names, as the instance that wrote it since the last checkpoint does), saves reading
 * the journal back; without it the journal is read.
 */
export const checkpointJournal = async (c: JournalContext, files?: readonly string[]): Promise<void> => {
  const named = files ?? (await readJournal(c.journal)).records.flatMap((r) => r.streams.map((e) => e.file));
  const names = [...new Set(named)].filter((n) => hashOfFileName(n) !== undefined);
  await Promise.all(
    names.map(async (name) => {
      let file: FileOps;
      try {
        file = await c.fs.open(join(c.streamsDir, name), 'read');
      } catch (e) {
        if (isErrnoCode(e, 'ENOENT')) return;
        throw e;
      }
      try {
        await file.sync();
      } finally {
        await file.close();
      }
    }),
  );
  if ((await c.journal.size()) > 0) {
    await c.index.sync();
    await c.journal.truncate(0);
    await c.journal.sync();
  }
};

/**
 * At open, before anything reads the index: a power loss may have dropped index records and stream bytes that
 * only the journal made durable. Writes back each journaled commit's index records where the index is missing
 * them (a record whose place holds different records, or whose positions a later journaled commit starts inside,
 * is an abandoned commit: skipped — batches stay all-or-none).
 * @returns the journal records that belong to the index, for replayJournalStreams
 */
export const replayJournalIndex = async (c: JournalContext): Promise<JournalRecord[]> => {
  const { records } = await readJournal(c.journal);
  const kept: JournalRecord[] = [];
  for (const [i, record] of records.entries()) {
    // Commits are serialized: a later commit that starts inside this one's positions found this one not in the
    // index — this one was abandoned (its index write never happened), whatever the index shows now.
    const end = record.index.first + record.index.bytes.length / INDEX_RECORD_BYTES;
    if (records.slice(i + 1).some((later) => later.index.first < end)) continue;
    const start = record.index.first * INDEX_RECORD_BYTES;
    const size = await c.index.size();
    if (size < start) continue; // a gap: not a commit that followed the durable index
    const have = Math.min(size - start, record.index.bytes.length);
    const current = have > 0 ? await readExactly(c.index, start, have, c.indexPath) : Buffer.alloc(0);
    if (!current.equals(record.index.bytes.subarray(0, have))) continue;
    if (have < record.index.bytes.length) await c.index.write(record.index.bytes.subarray(have), start + have);
    kept.push(record);
  }
  return kept;
};

/**
 * Then writes back every journaled stream line the (repaired) index says is committed and the file no longer
 * holds. Lines the index does not know are skipped: never acknowledged, and maybe replaced since.
 */
export const replayJournalStreams = async (c: JournalContext, records: readonly JournalRecord[], index: IndexLookup): Promise<void> => {
  for (const entry of records.flatMap((r) => r.streams)) {
    const hash = hashOfFileName(entry.file);
    if (hash === undefined) continue;
    const path = join(c.streamsDir, entry.file);
    if ((await c.fs.sizeOf(path)) === undefined) continue;
    const file = await c.writeHandle(path);
    let size = await file.size();
    let at = 0;
    while (at < entry.bytes.length) {
      const nl = entry.bytes.indexOf(0x0a, at);
      if (nl < 0) break;
      const line = entry.bytes.subarray(at, nl + 1);
      const offset = entry.offset + at;
      at = nl + 1;
      const decoded = decodeLine(line.subarray(0, line.length - 1));
      if (typeof decoded === 'string' || decoded.kind !== 'event') continue;
      if (!(await isCommitted(index, hash, { event: decoded.event, offset, length: line.length - 1, crc: decoded.crc }))) continue;
      // Written back only where the file still reaches: a file that lost bytes before the journaled ones lost
      // more than a power loss can take, and verification refuses it rather than leaving a hole.
      if (offset > size) break;
      const current = Buffer.alloc(line.length);
      const got = await file.read(current, 0, line.length, offset);
      if (got === line.length && current.equals(line)) continue;
      await file.write(line, offset);
      size = Math.max(size, offset + line.length);
    }
  }
};
