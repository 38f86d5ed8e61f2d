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
  let buffer = Buffer.alloc(CHUNK);
  let filled = 0; // bytes of buffer in use, starting at file offset `base`
  let base = start;
  while (base + filled < end) {
    if (filled === buffer.length) {
      const bigger = Buffer.alloc(buffer.length * 2);
      buffer.copy(bigger, 0, 0, filled);
      buffer = bigger;
    }
    const want = Math.min(buffer.length - filled, end - base - filled);
    const got = await file.read(buffer, filled, want, base + filled);
    if (got === 0) break;
    const scanFrom = filled;
    filled += got;
    let lineStart = 0;
    let nl = indexOfNewline(buffer.subarray(0, filled), scanFrom);
    while (nl !== -1) {
      yield { offset: base + lineStart, bytes: Buffer.from(buffer.subarray(lineStart, nl)) };
      lineStart = nl + 1;
      nl = indexOfNewline(buffer.subarray(0, filled), lineStart);
    }
    if (lineStart > 0) {
      buffer.copy(buffer, 0, lineStart, filled);
      filled -= lineStart;
      base += lineStart;
    }
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
