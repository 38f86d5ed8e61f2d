import type { FileOps } from './fs-ops.js';
import { crc32 } from './line-codec.js';
import { forwardLines } from './stream-file.js';

/**
 * The group journal `group.journal`: lets a group commit that touches several existing stream files pay one
 * fsync (the journal's) instead of one per file. The commit writes the stream lines without fsync, appends a
 * copy of them here (file name, offset, bytes) and fsyncs this file, then writes and fsyncs the index.
 * A checkpoint fsyncs every stream file the journal names, then empties the journal. After a power loss,
 * opening the store first writes back any committed journal bytes a stream file lost, then checkpoints.
 *
 * One record per line: {"c":"<crc32 of the inner array>","j":[["<file name>",<offset>,"<base64 bytes>"],…]}
 */
export const JOURNAL_FILE = 'group.journal';

export interface JournalEntry {
  readonly file: string;
  readonly offset: number;
  readonly bytes: Buffer;
}

const INNER_START = 20;

export const encodeJournalRecord = (entries: readonly JournalEntry[]): Buffer => {
  const inner = Buffer.from(JSON.stringify(entries.map((e) => [e.file, e.offset, e.bytes.toString('base64')])), 'utf8');
  const head = Buffer.from(`{"c":"${crc32(inner).toString(16).padStart(8, '0')}","j":`, 'ascii');
  return Buffer.concat([head, inner, Buffer.from('}\n', 'ascii')]);
};

/** The journal's valid records, in order, and the byte just after the last one (a torn tail is ignored). */
export const readJournal = async (file: FileOps): Promise<{ entries: JournalEntry[]; end: number }> => {
  const entries: JournalEntry[] = [];
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
    if (!Array.isArray(parsed)) break;
    for (const item of parsed as unknown[]) {
      const [name, offset, data] = item as [string, number, string];
      entries.push({ file: name, offset, bytes: Buffer.from(data, 'base64') });
    }
    end = line.offset + b.length + 1;
  }
  return { entries, end };
};
