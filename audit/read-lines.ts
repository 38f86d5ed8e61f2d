import { createReadStream } from 'node:fs';

/** Options of `readLineBatches`. */
export interface ReadLinesOptions {
  /** Bytes read from the file at a time. @defaultValue 1 MiB */
  readonly chunkBytes?: number;
  /** The byte where reading starts (a line's first byte). @defaultValue 0 */
  readonly start?: number;
  /** The byte where reading stops, exclusive (just after a line's `\n`, or the file's end). @defaultValue the file's end */
  readonly end?: number;
}

/**
 * The batch the CLI's log readers ask for (audit, its chain thread, verify and why): at 64 KiB a batch of lines dies
 * young instead of outliving two scavenges and being promoted, which keeps a long read's peak RSS down.
 */
export const LOG_BATCH_BYTES = 64 * 1024;

/** One line of a JSONL log as a value: its JSON, or the line itself when it is not JSON (which readers refuse as "not a JSON object"). */
export const lineValue = (line: string): unknown => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return line;
  }
};

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Streams a text file as batches of lines (the lines each read chunk completes), never holding more of the file
 * than one chunk and one unfinished line, so memory stays flat however long the file is. Lines end at `\n`; a
 * `\r` before it is dropped (CRLF files read like LF files); the last line needs no terminator; an empty file
 * gives no line. Bytes are decoded as UTF-8 per line (a `\n` byte never occurs inside a multi-byte character).
 * `start`/`end` read one byte range of the file: a range that starts at a line's first byte and ends just after a
 * `\n` gives exactly the lines a whole read gives there.
 */
export async function* readLineBatches(file: string, options: ReadLinesOptions = {}): AsyncGenerator<string[]> {
  if (options.end !== undefined && options.end <= (options.start ?? 0)) return;
  const stream = createReadStream(file, {
    highWaterMark: options.chunkBytes ?? 1 << 20,
    ...(options.start !== undefined ? { start: options.start } : {}),
    // createReadStream's end is inclusive
    ...(options.end !== undefined ? { end: options.end - 1 } : {}),
  });
  let carry: Buffer | null = null;
  const decode = (buf: Buffer, start: number, end: number): string => buf.toString('utf8', start, end > start && buf[end - 1] === CR ? end - 1 : end);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const lines: string[] = [];
    let from = 0;
    let nl = chunk.indexOf(NEWLINE);
    if (carry !== null && nl >= 0) {
      const first = Buffer.concat([carry, chunk.subarray(0, nl)]);
      lines.push(decode(first, 0, first.length));
      carry = null;
      from = nl + 1;
      nl = chunk.indexOf(NEWLINE, from);
    }
    while (nl >= 0) {
      lines.push(decode(chunk, from, nl));
      from = nl + 1;
      nl = chunk.indexOf(NEWLINE, from);
    }
    if (from < chunk.length) carry = carry === null ? Buffer.from(chunk.subarray(from)) : Buffer.concat([carry, chunk.subarray(from)]);
    if (lines.length > 0) yield lines;
  }
  if (carry !== null && carry.length > 0) yield [decode(carry, 0, carry.length)];
}
