import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DerivedCacheSource } from '../../../runtime/ports/derived-cache.js';
import { streamFileName } from './file-name.js';
import { STREAMS_DIR } from './store-directory.js';

/**
 * Derived caches beside the streams (docs/store-jsonl.md, "Derived caches"): `derived/<stream file hash>.<name>`,
 * the text a reader saved. Like the fold snapshots (`snapshots/`, a separate format), a cache of the log, never data:
 * written with node:fs directly as a temporary file renamed into place, never fsynced; a torn or missing file costs a
 * full read. The stored digest is SHA-256 over the stream file's bytes from its first byte through the end of the
 * line of event `count - 1` (the header line and the first `count` event lines): an edit of any of those bytes, a
 * recomputed line checksum included, changes it.
 */
export const DERIVED_DIR = 'derived';

/** Names a cache may take: lowercase letters, digits and dashes. */
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** How much of a stream file one read takes while it is hashed. */
const CHUNK = 1 << 20;

/** The path of a stream's cache `name` in the store directory `dir`. */
export const derivedFileOf = (dir: string, stream: string, name: string): string => {
  if (!NAME.test(name)) throw new RangeError(`a derived cache's name is [a-z0-9-], at most 64 characters: ${JSON.stringify(name)}`);
  return join(dir, DERIVED_DIR, `${streamFileName(stream).hash}.${name}`);
};

/**
 * SHA-256 (hex) of the first `lines` lines of `path` (through their last newline); null when the file is missing or
 * has fewer complete lines.
 */
export const digestOfLines = async (path: string, lines: number): Promise<string | null> => {
  let file;
  try {
    file = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let left = lines;
    for (;;) {
      if (left === 0) return hash.digest('hex');
      const { bytesRead } = await file.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) return null;
      let at = 0;
      while (left > 0) {
        const nl = buf.indexOf(0x0a, at);
        if (nl < 0 || nl >= bytesRead) break;
        at = nl + 1;
        left--;
      }
      hash.update(buf.subarray(0, left === 0 ? at : bytesRead));
    }
  } finally {
    await file.close();
  }
};

/**
 * {@link DerivedCacheSource} over the JSONL store in `dir` (`JsonlEventStore.directory`). `writable: false` (a
 * store opened read-only) saves nothing.
 */
export const jsonlDerivedCache = (dir: string, options: { readonly writable?: boolean } = {}): DerivedCacheSource => ({
  // the header line, then one line per event (docs/store-jsonl.md, "Stream lines")
  storedDigest: (stream, count) => digestOfLines(join(dir, STREAMS_DIR, streamFileName(stream).fileName), count + 1),
  loadDerived: async (stream, name) => {
    try {
      return await readFile(derivedFileOf(dir, stream, name), 'utf8');
    } catch {
      return null;
    }
  },
  saveDerived: async (stream, name, text) => {
    if (options.writable === false) return;
    const path = derivedFileOf(dir, stream, name);
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(join(dir, DERIVED_DIR), { recursive: true });
      await writeFile(tmp, text);
      await rename(tmp, path);
    } catch {
      await rm(tmp, { force: true }).catch(() => undefined);
    }
  },
});
