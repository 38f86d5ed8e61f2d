import type { FileOps } from './fs-ops.js';
import { crc32 } from './line-codec.js';
import { forwardLines } from './stream-file.js';

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
