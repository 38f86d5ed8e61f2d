import type { FileOps } from './fs-ops.js';
import { decodeLineAt } from './line-codec.js';

/** Bytes read at a probe of {@link seekLine}, at first; a probe that holds no whole line is read again, 4 times larger. */
const PROBE = 4 * 1024;
/** The largest probe: a line longer than this ends the seek (the read then starts where it would have). */
const MAX_PROBE = 1024 * 1024;
/** Probes at most (a committed tail of 2^40 bytes takes 28 of 4 KiB). */
const MAX_PROBES = 48;

/** The committed part of a stream file: its header's end, its committed end. */
export interface SeekSpan {
  readonly headerEnd: number;
  readonly end: number;
}

/** The first whole line that starts after `at` (its offset and revision), reading `size` bytes; 'long' when none fits; undefined when it does not decode as an event line. */
const lineAfter = async (file: FileOps, span: SeekSpan, at: number, size: number, buffer: Buffer): Promise<{ offset: number; rev: number } | 'long' | undefined> => {
  const n = await file.read(buffer, 0, Math.min(size, span.end - at), at);
  const first = buffer.indexOf(0x0a);
  if (first < 0 || first >= n) return 'long';
  const start = first + 1;
  const stop = buffer.indexOf(0x0a, start);
  if (stop < 0 || stop >= n) return 'long';
  const decoded = decodeLineAt(buffer, start, stop);
  if (typeof decoded === 'string' || decoded.kind !== 'event') return undefined;
  return { offset: at + start, rev: decoded.event.rev };
};

/**
 * A committed line of a stream file at or before revision `target` and at most `near` revisions before it (or, when
 * the bisection narrowed to one probe, the line found there), found by bisecting the file's committed bytes: each
 * probe reads a few KiB, takes the first whole line that starts in them and decodes it (checksum, JSON, an event
 * line) for the revision it carries. Lines are newline-terminated and a line never holds a raw newline, so the byte
 * after a newline starts a line. About log2(file / 4 KiB) probes, whatever the stream's length: the offset a read by
 * seq of a long stream starts at, without a pass over the index.
 *
 * Undefined when no such line was found (a probe met a line longer than {@link MAX_PROBE}, or one that does not
 * decode): the caller reads as it would have. The line found is a hint: the read from it checks every line again,
 * and each line after it must carry the next revision.
 */
export const seekLine = async (file: FileOps, span: SeekSpan, target: number, near: number): Promise<{ readonly rev: number; readonly offset: number } | undefined> => {
  let lo = span.headerEnd;
  let loRev = 0;
  let hi = span.end;
  let size = PROBE;
  let buffer = Buffer.allocUnsafe(size);
  for (let probes = 0; probes < MAX_PROBES && target - loRev > near && hi - lo > size; probes++) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const line = await lineAfter(file, span, mid, size, buffer);
    if (line === undefined) return undefined;
    if (line === 'long') {
      if (size >= MAX_PROBE) return undefined;
      size *= 4;
      buffer = Buffer.allocUnsafe(size);
      continue;
    }
    if (line.rev <= target) {
      lo = line.offset;
      loRev = line.rev;
    } else hi = mid;
  }
  // close enough, or the target's line starts within a probe after lo
  return loRev > 0 && (target - loRev <= near || hi - lo <= size) ? { rev: loRev, offset: lo } : undefined;
};
