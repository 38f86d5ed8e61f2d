import type { FileOps } from './fs-ops.js';
import { indexOfNewline } from './line-codec.js';

/** A line of a stream file, without its newline; `offset` is its first byte. */
export interface RawLine {
  readonly offset: number;
  readonly bytes: Buffer;
}

const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Streams the complete lines of `file[start..end)` forwards, reading one chunk at a time (a line longer than a
 * chunk grows the buffer to fit it, never the whole file). A trailing fragment without newline is not yielded.
 */
export async function* forwardLines(file: FileOps, start: number, end: number): AsyncGenerator<RawLine> {
  for await (const batch of forwardLineBatches(file, start, end)) yield* batch;
}

/**
 * `forwardLines` a chunk at a time: the lines each read completes, as one array (so a reader pays one async step
 * per chunk, not per line). Each chunk is read into a fresh buffer and the lines are views of it: a line stays
 * valid after the next read.
 */
export async function* forwardLineBatches(file: FileOps, start: number, end: number, chunkBytes = CHUNK): AsyncGenerator<RawLine[]> {
  let buffer = Buffer.allocUnsafe(chunkBytes);
  let filled = 0; // bytes of buffer in use, starting at file offset `base`
  let base = start;
  while (base + filled < end) {
    const want = Math.min(buffer.length - filled, end - base - filled);
    const got = await file.read(buffer, filled, want, base + filled);
    if (got === 0) break;
    const scanFrom = filled;
    filled += got;
    const lines: RawLine[] = [];
    let lineStart = 0;
    let nl = indexOfNewline(buffer.subarray(0, filled), scanFrom);
    while (nl !== -1) {
      lines.push({ offset: base + lineStart, bytes: buffer.subarray(lineStart, nl) });
      lineStart = nl + 1;
      nl = indexOfNewline(buffer.subarray(0, filled), lineStart);
    }
    // the unfinished line moves to the front of a fresh buffer (the yielded lines keep viewing this one)
    const rest = filled - lineStart;
    const next = Buffer.allocUnsafe(rest === buffer.length ? buffer.length * 2 : Math.max(chunkBytes, rest * 2));
    buffer.copy(next, 0, lineStart, filled);
    buffer = next;
    filled = rest;
    base += lineStart;
    if (lines.length > 0) yield lines;
  }
}

/**
 * Streams the lines of `file[0..end)` backwards, one chunk at a time. The first item is an incomplete trailing
 * fragment (`complete: false`) when `end` is not just after a newline.
 */
export async function* backwardLines(file: FileOps, end: number): AsyncGenerator<RawLine & { readonly complete: boolean }> {
  let pos = end; // acc holds file bytes [pos, pos + acc.length)
  let acc = Buffer.alloc(0);
  let fragment = true;
  for (;;) {
    const nl = acc.lastIndexOf(0x0a);
    if (nl >= 0) {
      const piece = acc.subarray(nl + 1);
      if (!fragment || piece.length > 0) yield { offset: pos + nl + 1, bytes: piece, complete: !fragment };
      fragment = false;
      acc = acc.subarray(0, nl);
      continue;
    }
    if (pos === 0) {
      if (!fragment || acc.length > 0) yield { offset: 0, bytes: acc, complete: !fragment };
      return;
    }
    const size = Math.min(CHUNK, pos);
    const chunk = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const got = await file.read(chunk, read, size - read, pos - size + read);
      if (got === 0) throw new Error('file shrank while reading backwards');
      read += got;
    }
    pos -= size;
    acc = Buffer.concat([chunk, acc]);
  }
}

/**
 * Complete lines of a file range, as positions in a buffer (no object per line): line `i` is
 * `bytes[starts[i], ends[i])`, without its newline, and starts at file offset `base + starts[i]`.
 */
export interface LineRun {
  readonly bytes: Buffer;
  readonly base: number;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/**
 * The complete lines of `file[start..end)`, forwards, one file read at a time: for each read, the lines it
 * completes, as one or two runs (a line begun by an earlier read is joined into a run of its own, first). The next
 * read is already under way while the caller handles a read's lines. Each read has a fresh buffer, so a run stays
 * valid after the next one. A trailing fragment without newline is not yielded.
 */
export async function* forwardLineRuns(file: FileOps, start: number, end: number, chunkBytes = CHUNK): AsyncGenerator<LineRun[]> {
  const readAt = async (position: number): Promise<Buffer> => {
    const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, end - position));
    const got = await file.read(buffer, 0, buffer.length, position);
    return buffer.subarray(0, got);
  };
  const ahead = (position: number): Promise<Buffer> | null => {
    if (position >= end) return null;
    const read = readAt(position);
    read.catch(() => undefined); // handled where it is awaited; until then it must not count as unhandled
    return read;
  };
  let position = start;
  let next = ahead(position);
  let fragment: Buffer[] = []; // bytes of a line begun by earlier reads
  let fragmentBase = start;
  try {
    while (next !== null) {
      const bytes = await next;
      if (bytes.length === 0) return; // the file ends early: what is there was yielded
      const base = position;
      position += bytes.length;
      next = ahead(position);
      const runs: LineRun[] = [];
      let lineStart = 0;
      let nl = bytes.indexOf(NEWLINE);
      if (fragment.length > 0) {
        if (nl === -1) {
          fragment.push(bytes);
          continue;
        }
        fragment.push(bytes.subarray(0, nl));
        const joined = Buffer.concat(fragment);
        runs.push({ bytes: joined, base: fragmentBase, starts: [0], ends: [joined.length] });
        fragment = [];
        lineStart = nl + 1;
        nl = bytes.indexOf(NEWLINE, lineStart);
      }
      const starts: number[] = [];
      const ends: number[] = [];
      while (nl !== -1) {
        starts.push(lineStart);
        ends.push(nl);
        lineStart = nl + 1;
        nl = bytes.indexOf(NEWLINE, lineStart);
      }
      if (starts.length > 0) runs.push({ bytes, base, starts, ends });
      if (lineStart < bytes.length) {
        fragment = [bytes.subarray(lineStart)];
        fragmentBase = base + lineStart;
      }
      if (runs.length > 0) yield runs;
    }
  } finally {
    // a read still under way must end before the caller closes the file
    if (next !== null) await next.catch(() => undefined);
  }
}
