import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import type { FileOps } from './fs-ops.js';
import { readExactly } from './global-index.js';
import { decodeIndexRecord, INDEX_RECORD_BYTES } from './line-codec.js';

/** Records read from `global.idx` at a time while scanning. */
const SCAN_RECORDS = 4096;

/** What the committed index says of one stream file: its last revision and the position of that event. */
export interface IndexedRevision {
  /** Last revision the index holds for the file's hash (its records counted, minus one); -1 when none. */
  readonly revision: number;
  /** Global position of that event; -1 when none. */
  readonly position: number;
}

const NONE: IndexedRevision = { revision: -1, position: -1 };

/**
 * Where the first pass over the index may start: per stream file hash, the last revision held by the first `upTo`
 * committed records (the session catalog's rows, checked against the index by their key; catalog-files.ts), or
 * undefined when that is not known.
 */
export type RevisionSeedSource = () => Promise<{ readonly upTo: number; readonly lastRevision: (hash: string) => number | undefined } | undefined>;

/** The sparse seq → offset index keeps the line offset of every OFFSET_STEP-th revision of each stream file. */
export const OFFSET_STEP = 256;

/**
 * Per stream file hash, the last revision the committed part of `global.idx` holds: one sequential pass over the
 * index the first time a store instance reads a stream, then only the records committed since (by this instance or
 * another writer), so the work is O(1) amortized per index record. A stream id is never written again once deleted,
 * so the records of a hash are its revisions 0, 1, … in order. Readers compare a stream file's committed tail with
 * it: a file that lost whole lines at its end, or was removed, while the index points into it, is refused (opening
 * checks only what the last commit touched).
 */
export class IndexRevisions {
  readonly #seed: RevisionSeedSource | undefined;
  /** The seed may be used: not yet tried, and no reset since (a reset confirms with a pass from record 0). */
  #seedable = true;
  #counts = new Map<string, { count: number; position: number }>();
  /** The seed's last revision of a file hash not counted yet (looked up when first needed), and the positions it covers. */
  #seeded: { readonly upTo: number; readonly lastRevision: (hash: string) => number | undefined } | undefined;
  /** Per file hash: the line offsets of revisions OFFSET_STEP, 2 × OFFSET_STEP, … (index k - 1 holds revision k × OFFSET_STEP). */
  #offsets = new Map<string, number[]>();
  #scanned = 0;
  /** The counts and offsets come from a pass that started at record 0 (not from the seed). */
  #fromZero = true;
  #pending: Promise<void> = Promise.resolve();

  /**
   * @param seed where the first pass may start instead of record 0 (the session catalog's rows: see
   * {@link RevisionSeedSource}); without it, or when it has nothing, the first pass reads every committed record.
   */
  constructor(seed?: RevisionSeedSource) {
    this.#seed = seed;
  }

  /** Extends the scan to the first `count` records (serialized: concurrent readers never count a record twice). */
  upTo(file: FileOps, path: string, count: number): Promise<void> {
    const run = this.#pending.then(async () => {
      if (this.#seedable && this.#scanned === 0 && this.#seed !== undefined) {
        this.#seedable = false;
        const seed = await this.#seed();
        if (seed !== undefined && seed.upTo > 0) {
          // the catalog's last revision of each stream file, as of its first `upTo` positions, looked up per file
          // when first needed: the position of that last event is not kept there, `upTo - 1` bounds it. No line
          // offsets: a read learns them as it passes.
          this.#seeded = seed;
          this.#scanned = seed.upTo;
          this.#fromZero = false;
        }
      }
      await this.#scan(file, path, count);
    });
    this.#pending = run.catch(() => undefined);
    return run;
  }

  /** Are the sparse offsets those of a pass from record 0 (so a missing one is not there to find)? */
  get offsetsWhole(): boolean {
    return this.#fromZero;
  }

  /**
   * Makes the sparse seq → offset index whole up to `count` records: when the counts came from the seed (which keeps
   * no offsets), one pass over the index from record 0, as a store instance without a seed makes at its first read.
   * A read by seq of a long stream pays it once per store instance; the reads of short streams never do.
   */
  fillOffsets(file: FileOps, path: string, count: number): Promise<void> {
    const run = this.#pending.then(async () => {
      if (!this.#fromZero) {
        this.#seeded = undefined;
        this.#counts = new Map();
        this.#offsets = new Map();
        this.#scanned = 0;
        this.#fromZero = true;
      }
      this.#seedable = false;
      await this.#scan(file, path, count);
    });
    this.#pending = run.catch(() => undefined);
    return run;
  }

  /** Forgets the scan (the index may have been rolled back under it); the next upTo starts over. */
  reset(): Promise<void> {
    const run = this.#pending.then(() => {
      this.#seeded = undefined;
      this.#counts = new Map();
      this.#offsets = new Map();
      this.#scanned = 0;
      this.#seedable = false;
      this.#fromZero = true;
    });
    this.#pending = run;
    return run;
  }

  /** What the scanned records say of the file hash `hash`. */
  of(hash: string): IndexedRevision {
    const c = this.#countOf(hash);
    return c === undefined ? NONE : { revision: c.count - 1, position: c.position };
  }

  /**
   * The sparse seq → offset index: the greatest revision at or below `revision` that is a multiple of OFFSET_STEP
   * (above 0) whose line offset the scanned records give, and that offset (the start of a committed line); undefined
   * when there is none. A read from a revision starts there instead of at the header.
   */
  lineAtOrBefore(hash: string, revision: number): { readonly rev: number; readonly offset: number } | undefined {
    const offsets = this.#offsets.get(hash);
    if (offsets === undefined) return undefined;
    const k = Math.min(Math.floor(revision / OFFSET_STEP), offsets.length);
    return k < 1 ? undefined : { rev: k * OFFSET_STEP, offset: offsets[k - 1]! };
  }

  /**
   * Notes the line offset of `revision` of the file hash `hash` (a committed line a read passed), when it is one the
   * sparse index keeps (a multiple of OFFSET_STEP) and the next one missing: a stream the first pass did not read
   * record by record (a seeded one) gets its sparse index from the reads that go through it.
   */
  noteLine(hash: string, revision: number, offset: number): void {
    if (revision < OFFSET_STEP || revision % OFFSET_STEP !== 0) return;
    let offsets = this.#offsets.get(hash);
    if (offsets === undefined) this.#offsets.set(hash, (offsets = []));
    if (offsets.length === revision / OFFSET_STEP - 1) offsets.push(offset);
  }

  /** The count of `hash`: scanned, else the seed's (then kept, so that the records after the seed add to it). */
  #countOf(hash: string): { count: number; position: number } | undefined {
    const c = this.#counts.get(hash);
    if (c !== undefined || this.#seeded === undefined) return c;
    const revision = this.#seeded.lastRevision(hash);
    if (revision === undefined) return undefined;
    const seeded = { count: revision + 1, position: this.#seeded.upTo - 1 };
    this.#counts.set(hash, seeded);
    return seeded;
  }

  async #scan(file: FileOps, path: string, count: number): Promise<void> {
    while (this.#scanned < count) {
      const from = this.#scanned;
      const n = Math.min(SCAN_RECORDS, count - from);
      const bytes = await readExactly(file, from * INDEX_RECORD_BYTES, n * INDEX_RECORD_BYTES, path);
      for (let i = 0; i < n; i++) {
        const at = i * INDEX_RECORD_BYTES;
        // every record is decoded whole (frame, fields, checksum): damage anywhere in the committed index is refused
        // at the first read of the store instance, as it was at open before open stopped reading every record
        const record = decodeIndexRecord(bytes, at);
        if (typeof record === 'string') {
          throw new StoreCorruptError(path, (from + i) * INDEX_RECORD_BYTES, `${record} (global position ${from + i}, inside the committed index)`, from + i + 1);
        }
        const hash = record.fileHash;
        const c = this.#countOf(hash);
        if (c === undefined) this.#counts.set(hash, { count: 1, position: from + i });
        else {
          // the record of revision c.count: every OFFSET_STEP-th one's line offset is kept
          if (c.count % OFFSET_STEP === 0) {
            let offsets = this.#offsets.get(hash);
            if (offsets === undefined) this.#offsets.set(hash, (offsets = []));
            if (offsets.length === c.count / OFFSET_STEP - 1) offsets.push(record.offset);
          }
          c.count++;
          c.position = from + i;
        }
      }
      this.#scanned = from + n;
    }
  }
}
