import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildEpoch, ChildListSink, ChildMessage, ChildRecord } from '../../domain/children/index.js';

/** A run is written out once this many characters of JSON are held: a few MiB, whatever the log's length. */
const RUN_CHARS = 4 * 1024 * 1024;
const WRITE_CHARS = 64 * 1024;
const READ_BYTES = 16 * 1024;

/** The three lists of a child record, in the order the record's JSON lists them. */
const KINDS = ['epochs', 'reports', 'settlements'] as const;
/** The {@link ChildListTexts} method of each list. */
const KIND_ITEMS = ['epoch', 'report', 'settlement'] as const;
type Kind = 0 | 1 | 2;

/**
 * The children's lists of `audit --json`, spooled as the audit decides them and grouped by child when written (an
 * external grouping: the events of many children interleave). Held lines are grouped by child in memory until they
 * reach a few MiB, then written as a run: one file per list, its lines `<child index> <JSON>` in child order (each
 * child's lines in log order). The output reads every run's files side by side, child after child.
 */
export interface ChildSpool {
  /** What the audit hands the children's lists to (`AuditorOptions.onChildLists`). */
  readonly sink: ChildListSink;
  /**
   * Writes the report's `children` array: each record's id and mode, then its lists — the spooled lines followed by
   * what the record itself still holds — exactly as `JSON.stringify` writes the records the fold would have kept.
   */
  write(records: readonly ChildRecord[], out: (text: string) => Promise<void> | undefined): Promise<void>;
  /**
   * The texts of one list of the record at `index` in `records` (the fold's report's children, in order), in the
   * record's order: the spooled ones, then those still held, then the record's own. Asked for each record in
   * order, each record's lists in the order `epochs`, `reports`, `settlements` (the runs are read once, in order).
   */
  texts(record: ChildRecord, index: number, list: ChildList): Generator<string>;
  /** Closes the run files (the caller removes the directory). */
  close(): void;
}

/** One of a child record's lists, by its key in the record. */
export type ChildList = (typeof KINDS)[number];

/** How a child spool writes the items of the children's lists: each as one text without a newline. */
export interface ChildListTexts {
  epoch(epoch: ChildEpoch): string;
  report(message: ChildMessage): string;
  settlement(message: ChildMessage): string;
}

/** Each item as its JSON (what `audit --json` prints). */
const JSON_TEXTS: ChildListTexts = { epoch: (e) => JSON.stringify(e), report: (m) => JSON.stringify(m), settlement: (m) => JSON.stringify(m) };

/** Options of {@link openChildSpool}. */
export interface ChildSpoolOptions {
  /** Characters of text held before they are written out as a run. @defaultValue 4 Mi */
  readonly runChars?: number;
  /** The items' texts (none may hold a newline). @defaultValue their JSON */
  readonly texts?: ChildListTexts;
}

/** A child spool writing its runs in `dir`. */
export const openChildSpool = (dir: string, options: ChildSpoolOptions = {}): ChildSpool => {
  const runChars = options.runChars ?? RUN_CHARS;
  const text = options.texts ?? JSON_TEXTS;
  // held lines per list, per child index
  let held: Map<number, string[]>[] = [new Map(), new Map(), new Map()];
  let heldChars = 0;
  const runs: string[][] = [];
  const add = (kind: Kind, child: number, json: string): void => {
    const lists = held[kind]!;
    const lines = lists.get(child);
    if (lines === undefined) lists.set(child, [json]);
    else lines.push(json);
    heldChars += json.length;
    if (heldChars >= runChars) writeRun();
  };
  const writeRun = (): void => {
    const files: string[] = [];
    for (let kind = 0; kind < 3; kind++) {
      const path = join(dir, `children-${runs.length}-${KINDS[kind]}.txt`);
      const fd = openSync(path, 'w');
      let buffer = '';
      const lists = held[kind]!;
      for (const child of [...lists.keys()].sort((a, b) => a - b)) {
        for (const line of lists.get(child)!) {
          buffer += `${child} ${line}\n`;
          if (buffer.length >= WRITE_CHARS) {
            writeSync(fd, buffer);
            buffer = '';
          }
        }
      }
      if (buffer !== '') writeSync(fd, buffer);
      closeSync(fd);
      files.push(path);
    }
    runs.push(files);
    held = [new Map(), new Map(), new Map()];
    heldChars = 0;
  };
  const readers: RunReader[] = [];
  let reading = false;
  /** The texts of list `kind` of child `i`: spooled, held, then the record's own. */
  function* texts(record: ChildRecord, i: number, kind: Kind): Generator<string> {
    if (!reading) {
      // runs[k][kind]: the run files, oldest first; the lines still held are the newest run
      for (const files of runs) readers.push(...files.map(runReader));
      reading = true;
    }
    for (let r = 0; r < runs.length; r++) {
      const reader = readers[r * 3 + kind]!;
      for (let line = reader.next(i); line !== null; line = reader.next(i)) yield line;
    }
    for (const line of held[kind]!.get(i) ?? []) yield line;
    const own = text[KIND_ITEMS[kind]] as (item: ChildEpoch | ChildMessage) => string;
    for (const value of record[KINDS[kind]]) yield own(value);
  }
  return {
    sink: {
      epoch: (child, epoch) => add(0, child, text.epoch(epoch)),
      report: (child, message) => add(1, child, text.report(message)),
      settlement: (child, message) => add(2, child, text.settlement(message)),
    },
    texts: (record, index, list) => texts(record, index, KINDS.indexOf(list) as Kind),
    async write(records, out) {
      // out() returns a promise only when it flushed: awaited then, never per line
      let flushed: Promise<void> | undefined;
      flushed = out('[');
      if (flushed !== undefined) await flushed;
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!;
        flushed = out(`${i === 0 ? '' : ','}{"childSessionId":${JSON.stringify(record.childSessionId)},"mode":${JSON.stringify(record.mode)}`);
        if (flushed !== undefined) await flushed;
        for (let kind = 0 as Kind; kind < 3; kind++) {
          let n = 0;
          flushed = out(`,"${KINDS[kind]}":[`);
          if (flushed !== undefined) await flushed;
          for (const line of texts(record, i, kind)) {
            flushed = out(n++ === 0 ? line : `,${line}`);
            if (flushed !== undefined) await flushed;
          }
          flushed = out(i === records.length - 1 && kind === 2 ? ']}]' : kind === 2 ? ']}' : ']');
          if (flushed !== undefined) await flushed;
        }
      }
      if (records.length === 0) {
        flushed = out(']');
        if (flushed !== undefined) await flushed;
      }
    },
    close() {
      for (const r of readers) r.close();
      readers.length = 0;
    },
  };
};

/** Reads a run file's lines in order: `next(child)` gives the next line's JSON while it belongs to `child`. */
interface RunReader {
  next(child: number): string | null;
  close(): void;
}

const runReader = (path: string): RunReader => {
  let fd: number | null = openSync(path, 'r');
  const bytes = Buffer.allocUnsafe(READ_BYTES);
  let lines: string[] = [];
  let at = 0;
  let rest: Buffer = Buffer.alloc(0);
  let ended = false;
  /** The next line, or null at the end of the file (reads a chunk when the current one is used up). */
  const peek = (): string | null => {
    while (at >= lines.length) {
      if (ended) return null;
      const n = readSync(fd!, bytes, 0, READ_BYTES, null);
      if (n === 0) {
        ended = true;
        lines = rest.length === 0 ? [] : [rest.toString('utf8')];
        rest = Buffer.alloc(0);
        at = 0;
        continue;
      }
      // a chunk may end inside a line or a multi-byte character: decode whole lines only
      const last = bytes.lastIndexOf(0x0a, n - 1);
      if (last < 0) {
        rest = Buffer.concat([rest, bytes.subarray(0, n)]);
        continue;
      }
      lines = Buffer.concat([rest, bytes.subarray(0, last)]).toString('utf8').split('\n');
      rest = Buffer.from(bytes.subarray(last + 1, n));
      at = 0;
    }
    return lines[at]!;
  };
  return {
    next(child) {
      const line = peek();
      if (line === null) return null;
      const space = line.indexOf(' ');
      if (Number(line.slice(0, space)) !== child) return null;
      at++;
      return line.slice(space + 1);
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
};
