import type { SessionCatalogPage, SessionCatalogQuery } from '../../../runtime/ports/session-catalog.js';
import { CatalogBaseView } from './catalog-base.js';
import { foldIndexRange } from './catalog-catch-up.js';
import { applyChange, type CatalogChange, type CatalogRow } from './catalog-fold.js';
import { appendLogLine, baseSize, decodeLogLines, logSize, readBaseFile, readLogFrom, replaceLog, writeBase, type CatalogKey } from './catalog-files.js';
import { CatalogState } from './catalog-state.js';
import { readExactly, viewIndex } from './global-index.js';
import { decodeIndexRecord, INDEX_RECORD_BYTES } from './line-codec.js';
import { io, type StoreDirectory } from './store-directory.js';

/** A writable instance writes a new base once it had to fold this many events from the index (or the log passes its limit). */
const BASE_AFTER_EVENTS = 5000;
/** The most index records the catalog folds to seed the first stream read (revisionSeed); past it, the read passes over the index. */
const SEED_FOLD_LIMIT = 4096;
/**
 * The catalog log is folded into a new base once it is this large (the `catalogLogBytes` option), or once it is as
 * large as the base and past {@link CATALOG_LOG_MIN_BYTES}: every reader decodes the whole log (its first list, its
 * first stream read), while a fold costs the writer one base, so a small catalog is folded often (a long session in
 * a small store does not leave each reader up to 1 MiB of lines to decode) and a large one no more often than before.
 */
export const CATALOG_LOG_BYTES = 1024 * 1024;
/** The smallest log that is folded into a new base because it outgrew the base (see {@link CATALOG_LOG_BYTES}). */
export const CATALOG_LOG_MIN_BYTES = 16 * 1024;

/**
 * One store instance's view of the session catalog (catalog-files.ts): the base, the log lines since, and the
 * index records committed after the last of them, folded into one row per stream. `list` brings it up to the
 * index's committed end first: it reads the log's new lines and folds only the index records no line covers (what a
 * writer that crashed before its log line, or an older steerlog, committed). A catalog whose last position's key
 * does not match the index (rebuilt, rolled back, lost) is dropped and folded again from the index.
 *
 * `noteCommit` is the commit path's part (under the directory lock, after the commit's index write): one log line.
 */
export class JsonlSessionCatalog {
  readonly #directory: StoreDirectory;
  readonly #writable: boolean;
  /** The `catalogLogBytes` option, when given: then the log is folded at that size only. */
  readonly #logLimit: number | undefined;
  /** The base's size in bytes, once known (read, written, or looked up by the first commit's check). */
  #baseBytes: number | undefined;
  #state = new CatalogState();
  #upTo = 0;
  #key: CatalogKey = null;
  #loaded = false;
  #logOffset = 0;
  #logIdentity = '';
  #pending: Promise<unknown> = Promise.resolve();
  /** Reads running or queued: a commit does not wait for them (it holds the lock) and folds the log another time. */
  #busy = 0;

  constructor(directory: StoreDirectory, writable: boolean, logLimit?: number) {
    this.#directory = directory;
    this.#writable = writable;
    this.#logLimit = logLimit;
  }

  /** A page of the catalog, brought up to the index's committed end first. */
  list(query: SessionCatalogQuery = {}): Promise<SessionCatalogPage> {
    return this.#serialized(async () => {
      await this.#refresh();
      return this.#state.page(query, (r) => !this.#directory.isDeleted(r.hash));
    });
  }

  /** Every row (deleted streams left out), brought up to date: for `store check` and tests. */
  rows(): Promise<CatalogRow[]> {
    return this.#serialized(async () => {
      await this.#refresh();
      return this.#state.all((r) => !this.#directory.isDeleted(r.hash));
    });
  }

  /**
   * What the catalog says of each stream file's last revision, brought up to the index's committed end, and how many
   * positions that covers: the first stream read of a store instance starts from it instead of reading every index
   * record (index-revisions.ts). Undefined when the catalog does not cover the index from position 0 (no base, and a
   * log that does not start there: folding the index whole would cost more than the pass it replaces) or a row is
   * broken (its last revision is not known), or when the catalog lags the index by more than SEED_FOLD_LIMIT records
   * (after a crash or a power loss that cost it its last lines, or an index rebuilt under it): catching up reads the
   * lines those records name, which can cost more than the pass over the index.
   */
  revisionSeed(): Promise<{ readonly upTo: number; readonly lastRevision: (hash: string) => number | undefined } | undefined> {
    return this.#serialized(async () => {
      if (!this.#loaded) {
        await this.#loadBase();
        if (this.#upTo === 0) {
          // no base: usable only when the log starts at position 0 (else the refresh would fold the index whole)
          const log = await io('read', () => readLogFrom(this.#directory.dir, 0, ''));
          if (decodeLogLines(log.bytes).lines[0]?.from !== 0) return undefined;
        }
      }
      if (!(await this.#refresh(SEED_FOLD_LIMIT))) return undefined;
      if (this.#state.anyBroken()) return undefined;
      return { upTo: this.#upTo, lastRevision: this.#state.lastRevisions() };
    });
  }

  /**
   * Under the directory lock, after a commit of positions [from, to) whose last index record has `key`: appends the
   * commit's changes to the log, and folds the log into a new base once it passes its limit. A failure changes
   * nothing but how much the next reader folds from the index: it is swallowed.
   */
  async noteCommit(from: number, to: number, key: CatalogKey, changes: readonly CatalogChange[]): Promise<void> {
    try {
      await appendLogLine(this.#directory.dir, { from, to, key, changes });
      if (this.#busy === 0 && (await logSize(this.#directory.dir)) > (await this.#currentLogLimit())) await this.#serialized(() => this.#compact());
    } catch {
      // a cache: the index is the truth, and readers fold what the log lacks
    }
  }

  /** Forgets everything read (the files were removed or rebuilt). */
  forget(): Promise<void> {
    return this.#serialized(async () => this.#reset());
  }

  /** The log size past which a commit folds the log into a new base (see {@link CATALOG_LOG_BYTES}). */
  async #currentLogLimit(): Promise<number> {
    if (this.#logLimit !== undefined) return this.#logLimit;
    this.#baseBytes ??= await baseSize(this.#directory.dir);
    return Math.min(CATALOG_LOG_BYTES, Math.max(CATALOG_LOG_MIN_BYTES, this.#baseBytes));
  }

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    this.#busy++;
    const run = this.#pending.then(fn).finally(() => this.#busy--);
    this.#pending = run.catch(() => undefined);
    return run;
  }

  #reset(): void {
    this.#state = new CatalogState();
    this.#upTo = 0;
    this.#key = null;
    this.#loaded = false;
    this.#logOffset = 0;
    this.#logIdentity = '';
  }

  /**
   * Brings the rows up to the index's committed end; with `maxFold`, only when that folds at most `maxFold` index
   * records (else it stops before folding, the rows as far as the base and the log take them, and says false).
   */
  async #refresh(maxFold = Number.POSITIVE_INFINITY): Promise<boolean> {
    const directory = this.#directory;
    await io('listSessions', () => directory.refreshDeletions());
    if (!this.#loaded) await this.#loadBase();
    const log = await io('listSessions', () => readLogFrom(directory.dir, this.#logOffset, this.#logIdentity));
    if (log.identity !== this.#logIdentity && this.#logIdentity !== '') {
      // the log was replaced (a new base covers it): start over from the new base
      this.#reset();
      return this.#refresh(maxFold);
    }
    this.#logIdentity = log.identity;
    const { lines } = decodeLogLines(log.bytes);
    let consumed = 0;
    for (const line of lines) {
      if (line.from === this.#upTo) {
        for (const c of line.changes) {
          this.#state.rows.set(c.stream, applyChange(this.#state.rows.get(c.stream), c));
          this.#state.byHash.set(c.hash, c.stream);
        }
        this.#upTo = line.to;
        this.#key = line.key;
      } else if (line.to > this.#upTo) break; // a gap (a writer died before its line): the index fills it
      consumed += encodedLength(log.bytes, consumed);
    }
    this.#logOffset = log.from + consumed;
    const view = await io('listSessions', () => viewIndex(directory.indexRead, directory.indexPath));
    if (this.#upTo > view.count || !(await this.#keyMatches())) {
      if (maxFold !== Number.POSITIVE_INFINITY) return false; // folding again from position 0: not for a seed
      this.#state = new CatalogState();
      this.#upTo = 0;
      this.#key = null;
    }
    if (view.count - this.#upTo > maxFold) return false;
    if (this.#upTo < view.count) {
      const folded = view.count - this.#upTo;
      this.#key = await io('listSessions', () => foldIndexRange(directory, this.#state, this.#upTo, view.count));
      this.#upTo = view.count;
      if (this.#writable && folded >= BASE_AFTER_EVENTS) await this.#writeBase().catch(() => undefined);
    }
    return true;
  }

  /** Reads the base (when there is one) into the rows: the start of the first refresh. */
  async #loadBase(): Promise<void> {
    const base = await io('listSessions', () => readBaseFile(this.#directory.dir));
    if (base instanceof CatalogBaseView) {
      this.#state.base = base;
      this.#upTo = base.upTo;
      this.#key = base.key;
    } else if (base) {
      for (const r of base.rows) {
        this.#state.rows.set(r.row.sessionId, r);
        this.#state.byHash.set(r.hash, r.row.sessionId);
      }
      this.#upTo = base.upTo;
      this.#key = base.key;
      // a version 1 base (every row decoded at load): a writable instance writes it again as version 2, once
      if (this.#writable) this.#baseBytes = await writeBase(this.#directory.dir, base).catch(() => undefined);
    }
    this.#loaded = true;
  }

  /** Does the index record at `upTo - 1` still say what the catalog's key says? */
  async #keyMatches(): Promise<boolean> {
    if (this.#upTo === 0) return true;
    if (this.#key === null) return false;
    const bytes = await io('listSessions', () => readExactly(this.#directory.indexRead, (this.#upTo - 1) * INDEX_RECORD_BYTES, INDEX_RECORD_BYTES, this.#directory.indexPath));
    const record = decodeIndexRecord(bytes, 0);
    return typeof record !== 'string' && record.fileHash === this.#key[0] && record.lineCrc === this.#key[1];
  }

  async #writeBase(): Promise<void> {
    const rows = this.#state.all((r) => !this.#directory.isDeleted(r.hash));
    this.#baseBytes = await writeBase(this.#directory.dir, { upTo: this.#upTo, key: this.#key, rows });
  }

  /** Under the lock: a new base of everything folded, and an empty log. */
  async #compact(): Promise<void> {
    await this.#refresh();
    await this.#writeBase();
    await replaceLog(this.#directory.dir);
    this.#logOffset = 0;
    this.#logIdentity = '';
    this.#loaded = true;
  }
}

/** The byte length of the line starting at `at` (its newline included). */
const encodedLength = (bytes: Buffer, at: number): number => bytes.indexOf(0x0a, at) + 1 - at;
