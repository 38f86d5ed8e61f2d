import { createHash } from 'node:crypto';
import { assertValidStreamId } from '../../../runtime/ports/store-validation.js';

/**
 * Stream id → file name. The name is `<slug>_<hash>.jsonl`:
 * - `hash` is 26 lowercase base32 characters (130 bits) of SHA-256 over the id's UTF-8 bytes: distinct ids get
 *   distinct names, and since it uses only `a-z2-7`, two names never differ by case alone (safe on
 *   case-insensitive and normalizing file systems: `A` and `a` are different streams with different hashes);
 * - `slug` is a readable, lowercase ASCII hint (`[a-z0-9-]`, at most 40 characters) with no meaning.
 * No id can produce a path separator, `.` or `..`, a reserved device name or a name longer than 73 bytes.
 * The stream id itself is stored in the file's header line and checked on open, so even a hash collision
 * would be detected (as `store-corrupt`), never silently merged.
 */
export const FILE_HASH_LENGTH = 26;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const SLUG_MAX = 40;

const base32 = (bytes: Uint8Array, chars: number): string => {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length >= chars) break;
  }
  return out;
};

export const streamHash = (stream: string): string =>
  base32(createHash('sha256').update(stream, 'utf8').digest(), FILE_HASH_LENGTH);

const slugOf = (stream: string): string =>
  stream
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');

export interface StreamFileName {
  readonly hash: string;
  readonly fileName: string;
}

/** Validates the id (typed InvalidStreamIdError) and returns its file name. */
export const streamFileName = (stream: string): StreamFileName => {
  assertValidStreamId(stream);
  const hash = streamHash(stream);
  return { hash, fileName: `${slugOf(stream)}_${hash}.jsonl` };
};

const FILE_NAME = /^[a-z0-9-]{0,40}_([a-z2-7]{26})\.jsonl$/;

/** The hash part of a stream file name, or undefined for other files. */
export const hashOfFileName = (fileName: string): string | undefined => FILE_NAME.exec(fileName)?.[1];
