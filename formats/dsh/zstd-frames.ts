import { createReadStream } from 'node:fs';
import { Decompress, decompress } from 'fzstd';
import xxhash from 'xxhash-wasm';
import { DshLogError } from './dsh-errors.js';

import { startsWithZstdMagic } from './zstd-magic.js';

export { startsWithZstdMagic, ZSTD_MAGIC } from './zstd-magic.js';

const isSkippableMagic = (b: Uint8Array, at: number): boolean => (b[at]! & 0xf0) === 0x50 && b[at + 1] === 0x2a && b[at + 2] === 0x4d && b[at + 3] === 0x18;

/** How long the frame at the start of `b` is: its byte length, `incomplete` (more bytes needed), or why it is not a frame. */
export type FrameExtent = { readonly kind: 'frame'; readonly length: number; readonly skippable: boolean } | { readonly kind: 'incomplete' } | { readonly kind: 'bad'; readonly at: number; readonly reason: string };

const INCOMPLETE: FrameExtent = { kind: 'incomplete' };

/**
 * Walks the frame at the start of `b` without decompressing it: the frame header (RFC 8878 §3.1.1.1), then each
 * block header (3 bytes: last-block bit, type, size) to the last block, then the 4-byte content checksum when the
 * header says there is one. Skippable frames (magic 0x184D2A5?) are walked by their size field.
 */
export const frameExtent = (b: Uint8Array): FrameExtent => {
  if (b.length < 4) return INCOMPLETE;
  if (isSkippableMagic(b, 0)) {
    if (b.length < 8) return INCOMPLETE;
    const size = b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! * 0x1000000);
    return b.length < 8 + size ? INCOMPLETE : { kind: 'frame', length: 8 + size, skippable: true };
  }
  if (!startsWithZstdMagic(b)) return { kind: 'bad', at: 0, reason: 'not the start of a zstd frame (no magic number 28 B5 2F FD)' };
  if (b.length < 5) return INCOMPLETE;
  const fhd = b[4]!;
  if (fhd & 0x08) return { kind: 'bad', at: 4, reason: 'zstd frame header: the reserved bit is set' };
  const single = (fhd & 0x20) !== 0;
  const fcsFlag = fhd >> 6;
  const fcsBytes = fcsFlag === 0 ? (single ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
  const dictBytes = [0, 1, 2, 4][fhd & 0x03]!;
  let at = 5 + (single ? 0 : 1) + dictBytes + fcsBytes;
  for (;;) {
    if (b.length < at + 3) return INCOMPLETE;
    const header = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    const last = (header & 1) === 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    if (type === 3) return { kind: 'bad', at, reason: 'zstd block of the reserved type' };
    at += 3 + (type === 1 ? 1 : size);
    if (last) break;
  }
  if (fhd & 0x04) at += 4;
  return b.length < at ? INCOMPLETE : { kind: 'frame', length: at, skippable: false };
};

/** One decompressed frame and the byte offset in the file where it starts. */
export interface DecodedFrame {
  readonly offset: number;
  readonly data: Uint8Array;
  /** The whole lines recovered from a torn last frame (not a complete frame). */
  readonly torn?: true;
}

/**
 * Bytes at the end of a file that do not complete a record: where they start and how many there are, and how many
 * bytes of whole lines were nevertheless decoded from them (a torn zstd frame whose complete blocks decompress; 0
 * for a plain file, whose torn tail is one unfinished line).
 */
export interface TornTail {
  readonly offset: number;
  readonly bytes: number;
  readonly recovered: number;
}

/**
 * What a torn last frame still holds, as the harness recovers it when it loads the file: the output of its complete
 * blocks (a streaming decompression of the bytes there are), cut after its last newline — whole lines only. Nothing
 * when those bytes are not the start of a frame or do not decompress.
 */
export const recoverTornFrame = (bytes: Uint8Array): Uint8Array => {
  if (!startsWithZstdMagic(bytes)) return new Uint8Array(0);
  const out: Uint8Array[] = [];
  try {
    new Decompress((chunk) => out.push(chunk.slice())).push(bytes, false);
  } catch {
    // a corrupt block: what was decoded before it stands
  }
  const all = Buffer.concat(out);
  return all.subarray(0, all.lastIndexOf(0x0a) + 1);
};

/** The XXH64 hasher (WebAssembly, instantiated once on first use). */
let hasher: ReturnType<typeof xxhash> | null = null;
const xxh64 = (): ReturnType<typeof xxhash> => (hasher ??= xxhash());

/** The content checksum a frame carries (its last 4 bytes, little-endian), or null when its header says it has none. */
export const storedChecksum = (frame: Uint8Array): number | null => {
  if ((frame[4]! & 0x04) === 0) return null;
  const at = frame.length - 4;
  return (frame[at]! | (frame[at + 1]! << 8) | (frame[at + 2]! << 16) | (frame[at + 3]! << 24)) >>> 0;
};

/** The content checksum zstd defines for `data`: the low 32 bits of its XXH64 with seed 0 (RFC 8878 §3.1.1). */
export const contentChecksum = async (data: Uint8Array): Promise<number> => Number((await xxh64()).h64Raw(data) & 0xffffffffn);

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

/**
 * Streams a file of concatenated zstd frames (one per appended batch), decompressing one frame at a time, so
 * memory holds one frame and one read chunk. A final frame the file ends inside is not an error: it is handed to
 * `onTornTail` (an unfinished append, as a crash leaves it), and the whole lines its complete blocks decode to are
 * read, as the harness reads them when it loads the file ({@link recoverTornFrame}); nothing after them. Anything else that is not
 * a frame, or a frame that does not decompress, is a `DshLogError` (`dsh-corrupt-frame`) naming its byte offset.
 * A frame whose header says it carries a content checksum is checked against what it decompresses to (the low 32
 * bits of XXH64, via xxhash-wasm): a mismatch is a `DshLogError` (`dsh-frame-checksum`) naming the file, the frame
 * (1-based) and its byte offset, and nothing of that frame or after it is read.
 */
export async function* zstdFrames(file: string, onTornTail: (tail: TornTail) => void, chunkBytes = 1 << 20): AsyncGenerator<DecodedFrame> {
  const hash = await xxh64();
  let pending: Uint8Array = new Uint8Array(0);
  let offset = 0;
  let frames = 0;
  const take = function* (): Generator<DecodedFrame> {
    for (;;) {
      const extent = frameExtent(pending);
      if (extent.kind === 'incomplete') return;
      if (extent.kind === 'bad') throw new DshLogError('dsh-corrupt-frame', { line: null, seq: null, byteOffset: offset + extent.at }, extent.reason);
      const frame = pending.subarray(0, extent.length);
      if (!extent.skippable) {
        frames++;
        let data: Uint8Array;
        try {
          data = decompress(frame);
        } catch (e) {
          throw new DshLogError('dsh-corrupt-frame', { line: null, seq: null, byteOffset: offset }, `the zstd frame does not decompress (${(e as Error).message})`);
        }
        const stored = storedChecksum(frame);
        if (stored !== null) {
          const computed = Number(hash.h64Raw(data) & 0xffffffffn);
          if (computed !== stored) {
            throw new DshLogError(
              'dsh-frame-checksum',
              { line: null, seq: null, byteOffset: offset, frame: frames },
              `content checksum mismatch in ${file}: the frame carries ${hex8(stored)}, its decompressed bytes give ${hex8(computed)} (XXH64, low 32 bits)`,
            );
          }
        }
        yield { offset, data };
      }
      pending = pending.subarray(extent.length);
      offset += extent.length;
    }
  };
  for await (const chunk of createReadStream(file, { highWaterMark: chunkBytes }) as AsyncIterable<Buffer>) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    yield* take();
  }
  if (pending.length > 0) {
    const recovered = recoverTornFrame(pending);
    onTornTail({ offset, bytes: pending.length, recovered: recovered.length });
    if (recovered.length > 0) yield { offset, data: recovered, torn: true };
  }
}
