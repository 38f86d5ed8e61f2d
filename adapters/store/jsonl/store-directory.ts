import { join } from 'node:path';
import { isStoreError, StoreClosedError, StoreIoError } from '../../../runtime/ports/store-errors.js';
import { streamFileName } from './file-name.js';
import type { FileOps, FsOps } from './fs-ops.js';
import { INDEX_FILE } from './global-index.js';
import { checkpointJournal, type JournalContext } from './group-journal.js';
import { quarantineBytes, type QuarantineTarget } from './quarantine.js';
import type { JsonlDurability } from './store-options.js';
import { IntentWriter } from './commit-intent.js';
import { DELETIONS_FILE, NO_DELETIONS, readDeletions, type Deletions } from './deletions.js';

export const STREAMS_DIR = 'streams';
const WRITE_HANDLES = 128;

/** Runs one file-system step of `operation`, wrapping a non-store error in StoreIoError. */
export const io = async <T>(operation: string, fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (e) {
    if (isStoreError(e)) throw e;
    throw new StoreIoError(operation, { cause: e });
  }
};

/** The store's directory as one instance has it open: paths, open files, write handles, and the sizes it last saw. */
/** A stream's file name, the hash it is made of, and its path. */
export interface StreamNames {
  readonly hash: string;
  readonly fileName: string;
  readonly path: string;
}
/** How many streams' names `names` keeps (then it starts over). */
const NAMES_KEPT = 4096;

export class StoreDirectory {
  readonly dir: string;
  readonly streamsDir: string;
  readonly indexPath: string;
  readonly fs: FsOps;
  readonly indexWrite: FileOps;
  readonly indexRead: FileOps;
  readonly journal: FileOps;
  readonly durability: JsonlDurability;
  /** Journal byte size after this instance's last journal write or checkpoint; -1 when unknown. */
  journalKnownSize = -1;
  /**
   * The stream files this instance journaled since its last checkpoint: while the journal is `journalKnownSize`
   * bytes long (nobody else wrote to it), they are every file it names, and a checkpoint need not read it back.
   */
  readonly journaledFiles = new Set<string>();
  /** Index byte size after this instance's last commit or recovery (a committed size). */
  lastIndexSize = -1;
  /**
   * The index's committed count when this instance last found that another writer had committed (or at its first
   * commit): a cached stream state validated before it may be stale (StreamState.validAt).
   */
  foreignCommitAt = 0;
  closed = false;
  /** Writes the commit intent before each commit's stream bytes (commit-intent.ts); the lock holder's only. */
  readonly intents: IntentWriter;
  /** The deletion log as last read (see deletions.ts); refreshDeletions re-reads it when its size changed. */
  deletions: Deletions = NO_DELETIONS;
  readonly #writeHandles = new Map<string, FileOps>();
  readonly #names = new Map<string, StreamNames>();

  constructor(dir: string, fs: FsOps, files: { indexWrite: FileOps; indexRead: FileOps; journal: FileOps }, durability: JsonlDurability) {
    this.dir = dir;
    this.streamsDir = join(dir, STREAMS_DIR);
    this.indexPath = join(dir, INDEX_FILE);
    this.fs = fs;
    this.indexWrite = files.indexWrite;
    this.indexRead = files.indexRead;
    this.journal = files.journal;
    this.durability = durability;
    this.intents = new IntentWriter(dir);
  }

  assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /** A stream's file name, its hash and its path (a hash of the id: kept for the streams of the last commits). */
  names(stream: string): StreamNames {
    let names = this.#names.get(stream);
    if (names === undefined) {
      const { hash, fileName } = streamFileName(stream);
      names = Object.freeze({ hash, fileName, path: join(this.streamsDir, fileName) });
      if (this.#names.size >= NAMES_KEPT) this.#names.clear();
      this.#names.set(stream, names);
    }
    return names;
  }

  /** Write handles stay open between commits; trimWriteHandles closes the least recently used after each. */
  async writeHandle(path: string): Promise<FileOps> {
    let file = this.#writeHandles.get(path);
    if (file) {
      this.#writeHandles.delete(path);
      this.#writeHandles.set(path, file); // most recently used last
      return file;
    }
    file = await this.fs.open(path, 'update');
    const raced = this.#writeHandles.get(path);
    if (raced) {
      await file.close();
      return raced;
    }
    this.#writeHandles.set(path, file);
    return file;
  }

  /** Re-reads the deletion log when its size changed since it was last read (another instance deleted a stream). */
  async refreshDeletions(): Promise<Deletions> {
    const size = (await this.fs.sizeOf(join(this.dir, DELETIONS_FILE))) ?? 0;
    if (size !== this.deletions.size) this.deletions = await readDeletions(this.fs, this.dir);
    return this.deletions;
  }

  /** Was the stream whose file has this hash deleted (as of the last refreshDeletions)? */
  isDeleted(hash: string): boolean {
    return this.deletions.byHash.has(hash);
  }

  /** Closes and forgets the write handle of a file about to be removed. */
  async dropWriteHandle(path: string): Promise<void> {
    const handle = this.#writeHandles.get(path);
    this.#writeHandles.delete(path);
    await handle?.close().catch(() => undefined);
  }

  /** Between commits only (a group may use more than WRITE_HANDLES files while it runs). */
  async trimWriteHandles(): Promise<void> {
    while (this.#writeHandles.size > WRITE_HANDLES) {
      const [oldest, handle] = this.#writeHandles.entries().next().value as [string, FileOps];
      this.#writeHandles.delete(oldest);
      await handle.close().catch(() => undefined);
    }
  }

  /**
   * Cuts `file` back to `length` — only ever the unfinished commit a crash left — after moving the bytes it
   * removes into the quarantine with `reason` (see quarantine.ts).
   */
  async cut(file: FileOps, path: string, length: number, reason: string, operation: string): Promise<void> {
    await io(operation, async () => {
      const size = await file.size();
      if (size <= length) return;
      await quarantineBytes(this.quarantineTarget(), file, path, length, size, reason);
      await file.truncate(length);
      if (this.durability !== 'none') await file.sync();
    });
  }

  /** Where and how carefully recovery keeps the bytes it cuts. */
  quarantineTarget(): QuarantineTarget {
    return { fs: this.fs, dir: this.dir, sync: this.durability !== 'none' };
  }

  /** Under the lock: fsync every stream file the journal names and the index, then empty the journal. */
  async checkpoint(): Promise<void> {
    // the journal as this instance left it: its files are known; else (another process wrote to it, or a write
    // failed half-way) it is read back
    const known = this.journalKnownSize >= 0 && (await this.journal.size()) === this.journalKnownSize ? [...this.journaledFiles] : undefined;
    this.journalKnownSize = -1;
    await checkpointJournal(this.journalContext(), known);
    this.journaledFiles.clear();
    this.journalKnownSize = 0;
  }

  journalContext(): JournalContext {
    return {
      fs: this.fs,
      journal: this.journal,
      index: this.indexWrite,
      indexPath: this.indexPath,
      streamsDir: this.streamsDir,
      writeHandle: (path) => this.writeHandle(path),
    };
  }

  /** Closes every file this instance holds open; errors are ignored. */
  async closeFiles(): Promise<void> {
    await this.indexWrite.close().catch(() => undefined);
    await this.journal.close().catch(() => undefined);
    for (const h of this.#writeHandles.values()) await h.close().catch(() => undefined);
    this.#writeHandles.clear();
    await this.indexRead.close().catch(() => undefined);
    await this.intents.close();
  }
}
