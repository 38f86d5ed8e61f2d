import { createReadStream, type ReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { startsWithZstdMagic, zstdFrames, type TornTail } from './zstd-frames.js';

/** One line of a harness log: its text, its 1-based number in the (decompressed) text, and where its bytes are. */
export interface DshLine {
  readonly text: string;
  readonly line: number;
  /** Byte offset of the line in the file (plain files) or of its frame (compressed files). */
  readonly offset: number;
  /** Did a newline end it? Only the last line of a plain file can lack one. */
  readonly terminated: boolean;
  /** Its length in bytes, without the newline. */
  readonly bytes: number;
}

/** How the file was stored: plain lines, or one zstd frame per appended batch. */
export interface DshFraming {
  readonly compression: 'none' | 'zstd';
  /** Frames read (compressed files), null for plain files. */
  readonly frames: number | null;
  /** An unfinished last record, not read; null when the file ends on a complete one. */
  readonly tornTail: TornTail | null;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const utf8 = new TextDecoder('utf-8', { fatal: false });
const text = (b: Uint8Array, from: number, to: number): string => utf8.decode(b.subarray(from, to > from && b[to - 1] === CR ? to - 1 : to));

/** Does the file start with the zstd magic number (28 B5 2F FD)? */
export const isZstdFile = async (file: string): Promise<boolean> => {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return startsWithZstdMagic(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
};

/**
 * The lines of a harness log, plain or zstd-compressed (detected by the magic number), streamed. A line never spans
 * two frames (each frame is one appended batch of whole lines). `framing` is complete once the lines are exhausted.
 */
export const dshLines = (file: string, compressed: boolean, chunkBytes = 1 << 20): { lines: AsyncIterable<DshLine>; framing: () => DshFraming } => {
  let frames = 0;
  let tornTail: TornTail | null = null;
  async function* plain(): AsyncGenerator<DshLine> {
    let carry: Uint8Array = new Uint8Array(0);
    let carryOffset = 0;
    let n = 0;
    for await (const chunk of createReadStream(file, { highWaterMark: chunkBytes }) as ReadStream & AsyncIterable<Buffer>) {
      const b = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
      let from = 0;
      for (let nl = b.indexOf(NEWLINE); nl >= 0; nl = b.indexOf(NEWLINE, from)) {
        yield { text: text(b, from, nl), line: ++n, offset: carryOffset + from, terminated: true, bytes: nl - from };
        from = nl + 1;
      }
      carryOffset += from;
      carry = b.subarray(from);
    }
    if (carry.length > 0) yield { text: text(carry, 0, carry.length), line: ++n, offset: carryOffset, terminated: false, bytes: carry.length };
  }
  async function* zstd(): AsyncGenerator<DshLine> {
    let n = 0;
    for await (const frame of zstdFrames(file, (t) => (tornTail = t), chunkBytes)) {
      if (!frame.torn) frames++;
      const b = frame.data;
      let from = 0;
      while (from < b.length) {
        let nl = b.indexOf(NEWLINE, from);
        if (nl < 0) nl = b.length;
        yield { text: text(b, from, nl), line: ++n, offset: frame.offset, terminated: true, bytes: nl - from };
        from = nl + 1;
      }
    }
  }
  return {
    lines: compressed ? zstd() : plain(),
    framing: () => ({ compression: compressed ? 'zstd' : 'none', frames: compressed ? frames : null, tornTail }),
  };
};
