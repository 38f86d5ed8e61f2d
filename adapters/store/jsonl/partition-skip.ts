/**
 * The JSONL store's partitioned global read (`ReadAllOptions.partition`): which stream files of an index read hold
 * streams of the kept partitions. A stream file's stream id is in its header line; the store caches it per file hash,
 * so each stream file's header is read once per store (not once per read), and the records of the other partitions'
 * streams are skipped before their lines are read or decoded.
 */
import { join } from 'node:path';
import { keepsEveryStream, streamPartitionTest, type StreamPartitionFilter } from '../../../runtime/ports/stream-partition.js';
import type { IndexRecord } from './line-codec.js';
import { streamOfFile } from './recovery.js';
import type { StoreDirectory } from './store-directory.js';
import type { StreamCache } from './stream-cache.js';

/** Header reads of unknown stream files at once. */
const OPEN_AT_ONCE = 32;

/**
 * A test of file hashes for `filter`: `skips(records)` learns the streams of the records' files it does not know yet,
 * then `skipped(hash)` says whether a file's records are left out. Without a filter nothing is skipped.
 */
export class PartitionSkip {
  readonly #kept: (stream: string) => boolean;
  readonly #filtering: boolean;
  readonly #directory: StoreDirectory;
  readonly #cache: StreamCache;

  constructor(directory: StoreDirectory, cache: StreamCache, filter: StreamPartitionFilter | undefined) {
    this.#directory = directory;
    this.#cache = cache;
    this.#filtering = !keepsEveryStream(filter);
    this.#kept = streamPartitionTest(filter);
  }

  /** Reads the header of every stream file of `records` whose stream is not known yet (deleted ones excepted). */
  async learn(records: readonly IndexRecord[], isDeleted: (hash: string) => boolean): Promise<void> {
    if (!this.#filtering) return;
    const unknown = new Set<string>();
    for (const r of records) if (!this.#cache.streamOfHash.has(r.fileHash) && !isDeleted(r.fileHash)) unknown.add(r.fileHash);
    if (unknown.size === 0) return;
    const hashes = [...unknown];
    const unnamed = hashes.find((h) => !this.#cache.fileOfHash.has(h));
    if (unnamed !== undefined) await this.#cache.fileNameOf(unnamed).catch(() => undefined); // one directory listing, not one per file
    for (let i = 0; i < hashes.length; i += OPEN_AT_ONCE) {
      await Promise.all(hashes.slice(i, i + OPEN_AT_ONCE).map((h) => this.#readHeader(h)));
    }
  }

  /** Are the records of the stream file `hash` left out? (A file whose stream is unknown is kept: the read then fails on it as it would unfiltered.) */
  skipped(hash: string): boolean {
    if (!this.#filtering) return false;
    const stream = this.#cache.streamOfHash.get(hash);
    return stream !== undefined && !this.#kept(stream);
  }

  async #readHeader(hash: string): Promise<void> {
    try {
      const name = await this.#cache.fileNameOf(hash);
      const file = await this.#directory.fs.open(join(this.#directory.streamsDir, name), 'read');
      try {
        this.#cache.streamOfHash.set(hash, await streamOfFile(file, name));
      } finally {
        await file.close();
      }
    } catch {
      // left unknown: the read opens the file itself and reports what is wrong with it
    }
  }
}
