/**
 * How a zstd-compressed file starts: what the CLI's format detection reads, kept apart from the frame reader so that
 * detecting a format loads no decompressor.
 */

/** The four bytes every zstd frame starts with (0xFD2FB528, little-endian). */
export const ZSTD_MAGIC = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd);

/** Does this buffer start with the zstd magic? */
export const startsWithZstdMagic = (b: Uint8Array): boolean => b.length >= 4 && ZSTD_MAGIC.every((x, i) => b[i] === x);
