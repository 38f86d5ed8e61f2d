import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { hashOfFileName } from './file-name.js';
import type { IdRevisions } from './id-revisions.js';
import { IndexRevisions, type RevisionSeedSource } from './index-revisions.js';
import type { StoreDirectory } from './store-directory.js';

/** What the lock holder knows of one stream's committed part. */
export interface StreamState {
  readonly stream: string;
  readonly hash: string;
  readonly fileName: string;
  readonly path: string;
  exists: boolean;
  /** Byte length of the committed part of the file. */
  size: number;
  /** Byte just after the header line. */
  headerEnd: number;
  lastRevision: number;
  /** Global position of each committed revision. */
  readonly positions: number[];
  /** The committed events' ids, as hashes (id-revisions.ts): a hit is confirmed from the file (storedRevisions in writer-state.ts). */
  readonly ids: IdRevisions;
  /**
   * The index's committed count when this state was last known to be current (checked against the file, or
   * written by this instance's own commit); -1 when never. It may be trusted without looking at the file only
   * while no other writer has committed since (StoreDirectory.foreignCommitAt).
   */
  validAt: number;
}

/** What one store instance remembers about streams between calls: their state, file names and read hints. */
export class StreamCache {
  readonly #directory: StoreDirectory;
  readonly states = new Map<string, StreamState>();
  readonly fileOfHash = new Map<string, string>();
  readonly streamOfHash = new Map<string, string>();
  /** Per stream: the revision whose line starts at `offset` (a committed line boundary). */
  readonly readHints = new Map<string, { rev: number; offset: number }>();
  /** Per file hash, the last revision the committed index holds (from the catalog and the index, at the first stream read). */
  readonly indexRevisions: IndexRevisions;

  constructor(directory: StoreDirectory, seed?: RevisionSeedSource) {
    this.#directory = directory;
    this.indexRevisions = new IndexRevisions(seed);
  }

  /** The file hash of a stream's file. */
  hashOf(stream: string): string {
    return this.#directory.names(stream).hash;
  }

  /** The stream file name of a file hash, listing the streams directory once when it is not known yet. */
  async fileNameOf(hash: string): Promise<string> {
    let name = this.fileOfHash.get(hash);
    if (name === undefined) {
      for (const n of await this.#directory.fs.readdir(this.#directory.streamsDir)) {
        const h = hashOfFileName(n);
        if (h !== undefined) this.fileOfHash.set(h, n);
      }
      name = this.fileOfHash.get(hash);
      if (name === undefined) throw new StoreCorruptError(this.#directory.indexPath, 0, `index refers to a missing stream file (hash ${hash})`);
    }
    return name;
  }
}
