import type { FileOps } from './fs-ops.js';
import { indexOfNewline } from './line-codec.js';

/** A line of a stream file, without its newline; `offset` is its first byte. */
export interface RawLine {
  readonly offset: number;
  readonly bytes: Buffer;
}

const CHUNK = 64 * 1024;

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
