import { operationErrorOf, preciseNow, type StoreOperation } from '../../../runtime/ports/store-operations.js';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadAllPagesOptions,
  ReadPagesOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamRevision,
  SubscribeAllOptions,
  SubscribeOptions,
  SubscriptionMessage,
} from '../../../runtime/ports/event-store.js';
import { assertValidBatch, assertValidExpected, assertValidStreamId, DEFAULT_MAX_EVENT_BYTES } from '../../../runtime/ports/store-validation.js';
import { allSource, catchUpThenLive, streamSource } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';
import { commitAppends, type PendingAppend } from './commit-appends.js';
import { commitDeletion, type PendingDeletion } from './commit-deletion.js';
import type { StreamDeletion } from '../../../runtime/ports/stream-deletion.js';

const isDeletion = (item: PendingAppend | PendingDeletion): item is PendingDeletion => (item as PendingDeletion).kind === 'delete';
import type { DirectoryLock } from './dir-lock.js';
import { readAllEvents, readAllPages } from './event-reads.js';
import { readStream, readStreamPages, revisionOf } from './stream-reads.js';
import type { FileOps, FsOps } from './fs-ops.js';
import { CommitQueue } from './group-commit.js';
import { LockLease } from './lock-lease.js';
import { recoverDirectory, verifyReadOnly } from './open-recovery.js';
import { StoreIoError } from '../../../runtime/ports/store-errors.js';
import { checkedForm } from '../../../runtime/ports/checked-events.js';
import { StoreDirectory } from './store-directory.js';
import { DEFAULT_COMMIT_SLICE_MS, type JsonlEventStoreOptions } from './store-options.js';
import { StreamCache } from './stream-cache.js';
import { JsonlSessionCatalog } from './session-catalog.js';
import type { SessionCatalogPage, SessionCatalogQuery, SessionCatalogSource } from '../../../runtime/ports/session-catalog.js';
import type { FoldSnapshot, FoldSnapshotSource, SnapshotRange } from '../../../runtime/ports/fold-snapshots.js';
import { appendSnapshotFile, readSnapshotFile, readSnapshotFileNear, snapshotFileOf, writeSnapshotFile, type SnapshotEncoder } from './fold-snapshot-files.js';
import { sharedSliceEncoder } from './fold-snapshot-encoders.js';
import { KeyedLock } from '../../../runtime/keyed-lock.js';

/** The EventStore port on a directory of JSONL files. See docs/store-jsonl.md. */
export class JsonlEventStore implements EventStore, StreamDeletion, SessionCatalogSource, FoldSnapshotSource {
  readonly #directory: StoreDirectory;
  readonly #cache: StreamCache;
  readonly #lock: DirectoryLock | undefined;
  readonly #maxEventBytes: number;
  readonly #pollIntervalMs: number;
  /** The fold snapshots' encoder: in slices of commitSliceMs, one write's snapshots at a time. */
  readonly #encodeSnapshots: SnapshotEncoder;
  readonly #queue: CommitQueue<PendingAppend | PendingDeletion>;
  readonly #notifier = new ChangeNotifier();
  readonly #catalog: JsonlSessionCatalog;
  #poller: NodeJS.Timeout | undefined;
  #polledIndexSize = -1;
  #unread: readonly string[] = [];
  readonly #operationListeners = new Set<(operation: StoreOperation) => void>();
  /** The writes of one stream's snapshot file, one at a time (a replacement and an append never interleave). */
  readonly #snapshotWrites = new KeyedLock();

  /** @internal use openJsonlEventStore */
  constructor(dir: string, fs: FsOps, lock: DirectoryLock | undefined, files: { indexWrite: FileOps; indexRead: FileOps; journal: FileOps }, options: JsonlEventStoreOptions) {
    this.#directory = new StoreDirectory(dir, fs, files, options.durability ?? 'group');
    // the first stream read starts from the session catalog's rows, not from index record 0 (index-revisions.ts)
    this.#cache = new StreamCache(this.#directory, () => this.#catalog.revisionSeed());
    this.#lock = lock;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#pollIntervalMs = options.pollIntervalMs ?? 100;
    const directory = this.#directory;
    const cache = this.#cache;
    const notifier = this.#notifier;
    const catalog = (this.#catalog = new JsonlSessionCatalog(this.#directory, lock !== undefined, options.catalogLogBytes));
    // A read-only store (no lock) refuses every append.
    const lease = lock ? new LockLease(lock) : undefined;
    const sliceMs = options.commitSliceMs ?? DEFAULT_COMMIT_SLICE_MS;
    this.#encodeSnapshots = sharedSliceEncoder(sliceMs);
    this.#queue = new CommitQueue<PendingAppend | PendingDeletion>(
      async (items, more) => {
        if (!lease) {
          for (const item of items) item.reject(new StoreIoError(isDeletion(item) ? 'deleteStream' : 'append', { cause: new Error(`${dir} was opened read-only`) }));
          return;
        }
        // appends share commits; a deletion is a commit of its own, in queue order
        for (let i = 0; i < items.length; ) {
          const item = items[i]!;
          if (isDeletion(item)) {
            await commitDeletion({ directory, cache, lock: lease, notifier }, item);
            i++;
            continue;
          }
          let j = i;
          while (j < items.length && !isDeletion(items[j]!)) j++;
          const run = items.slice(i, j) as PendingAppend[];
          const rest = j < items.length;
          await this.#timedCommit(run, () => commitAppends({ directory, cache, lock: lease, notifier, catalog, sliceMs }, run, () => rest || more()));
          i = j;
        }
      },
      this.#directory.durability === 'group' ? (options.maxGroupAppends ?? 1024) : 1,
    );
  }

  /** The `db.system.name` of steerlog's JSONL store. */
  readonly dbSystem = 'steerlog.jsonl';

  /**
   * Registers a listener of the store's fsync batches: each commit (a group of appends made durable by one fsync
   * in the `group` durability, one append in `fsync`; none in `none`), timed. Returns how to unregister it.
   */
  onOperation(listener: (operation: StoreOperation) => void): () => void {
    this.#operationListeners.add(listener);
    return () => void this.#operationListeners.delete(listener);
  }

  /** Runs one commit of appends, telling the operation listeners of it as an fsync batch (durable modes only). */
  async #timedCommit(run: readonly PendingAppend[], commit: () => Promise<void>): Promise<void> {
    if (this.#operationListeners.size === 0 || this.#directory.durability === 'none') return commit();
    const startTime = preciseNow();
    let error: unknown;
    try {
      await commit();
    } catch (e) {
      error = e;
      throw e;
    } finally {
      const streams = new Set(run.map((a) => a.stream));
      const op: StoreOperation = {
        operation: 'fsync',
        system: this.dbSystem,
        collection: streams.size === 1 ? [...streams][0]! : '',
        startTime,
        endTime: preciseNow(),
        events: run.reduce((n, a) => n + a.events.length, 0),
        appends: run.length,
        ...(error !== undefined ? { error: operationErrorOf(error) } : {}),
      };
      for (const l of this.#operationListeners) {
        try {
          l(op);
        } catch {
          // a listener's failure is its own: the commit stands
        }
      }
    }
  }

  get directory(): string {
    return this.#directory.dir;
  }

  /** The largest event this store accepts (the `maxEventBytes` option). */
  get maxEventBytes(): number {
    return this.#maxEventBytes;
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      this.#directory.assertOpen();
      assertValidStreamId(stream);
      assertValidExpected(expected);
      assertValidBatch(stream, events, this.#maxEventBytes);
    } catch (e) {
      return Promise.reject(e);
    }
    // a copy, so that the caller changing its objects before the commit changes nothing; an event the session log
    // built and marked is deep-frozen (and its serialized data is reused: checked-events.ts), so it is kept as is
    const copy = events.map((e) => (checkedForm(e) !== undefined ? e : { ...e, data: structuredClone(e.data) }));
    return new Promise<AppendResult>((resolve, reject) => this.#queue.push({ stream, events: copy, expected, resolve, reject }));
  }

  /**
   * Deletes a whole stream if its last revision is `expected` (StreamDeletion): a line in the deletion log, fsynced,
   * then the stream file removed. See docs/store-jsonl.md, "Deleting streams".
   */
  deleteStream(stream: string, expected: StreamRevision): Promise<void> {
    try {
      this.#directory.assertOpen();
      assertValidStreamId(stream);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => this.#queue.push({ kind: 'delete', stream, expected, time: Date.now(), resolve, reject }));
  }

  read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    return readStream(this.#directory, this.#cache, stream, options);
  }

  /** `read` a page at a time: forwards, a page is the lines one 256 KiB file read completes (at most `pageSize`). */
  readPages(stream: string, options: ReadPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readStreamPages(this.#directory, this.#cache, stream, options);
  }

  /**
   * A page of the session catalog (SessionCatalogSource): one row per stream, kept with the log in
   * `sessions.catalog` and its log; see docs/store-jsonl.md, "The session catalog". A damaged stream is listed
   * `broken`, never refused.
   */
  listSessions(query: SessionCatalogQuery = {}): Promise<SessionCatalogPage> {
    try {
      this.#directory.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#catalog.list(query);
  }

  /**
   * The session catalog itself (rows with their file hashes; `store check` compares them with a fold of the log).
   * @internal
   */
  get sessionCatalog(): JsonlSessionCatalog {
    return this.#catalog;
  }

  /**
   * The fold snapshots kept beside `stream` (FoldSnapshotSource: `snapshots/<file hash>.snap`, see
   * fold-snapshot-files.ts); none when the file is missing or damaged.
   */
  async loadFoldSnapshots(stream: string): Promise<readonly FoldSnapshot[]> {
    this.#directory.assertOpen();
    assertValidStreamId(stream);
    return readSnapshotFile(snapshotFileOf(this.#directory.dir, this.#directory.names(stream).hash));
  }

  /**
   * The fold snapshots a fold of `range` needs (FoldSnapshotSource): the snapshot file bisected by byte offset, only
   * the lines probed and the ones returned decoded (fold-snapshot-files.ts `decodeSnapshotsNear`).
   */
  async loadFoldSnapshotsNear(stream: string, range: SnapshotRange): Promise<readonly FoldSnapshot[]> {
    this.#directory.assertOpen();
    assertValidStreamId(stream);
    return readSnapshotFileNear(snapshotFileOf(this.#directory.dir, this.#directory.names(stream).hash), range);
  }

  /** Replaces the fold snapshots kept beside `stream`; a store opened read-only writes nothing (reading never writes). */
  async saveFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<void> {
    await this.#writeSnapshots(stream, undefined, (path) => writeSnapshotFile(this.#directory.dir, path, snapshots, this.#encodeSnapshots));
  }

  /**
   * Appends lines to the snapshot file of `stream` past its last good one (FoldSnapshotSource; only the file's tail
   * is read, fold-snapshot-files.ts `appendSnapshotFile`), and answers the seq of the file's last good line after it
   * (-1: none, or nothing could be written); a store opened read-only writes nothing and answers -1.
   */
  async appendFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<number> {
    return this.#writeSnapshots(stream, -1, (path) => appendSnapshotFile(this.#directory.dir, path, snapshots, this.#encodeSnapshots));
  }

  /**
   * A write of the snapshot file of `stream`: checked as every call (an open store, a valid id), skipped with
   * `readOnly`'s answer when the store was opened read-only (reading never writes), else run under the stream's
   * snapshot lock (the writes of one stream's snapshots run one at a time).
   */
  async #writeSnapshots<T>(stream: string, readOnly: T, write: (path: string) => Promise<T>): Promise<T> {
    this.#directory.assertOpen();
    assertValidStreamId(stream);
    if (this.#lock === undefined) return readOnly;
    const path = snapshotFileOf(this.#directory.dir, this.#directory.names(stream).hash);
    return this.#snapshotWrites.run(path, () => write(path));
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#directory.assertOpen();
    assertValidStreamId(stream);
    this.#startPolling();
    return catchUpThenLive(streamSource(this, stream, options.from), this.#notifier, null, options.signal);
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    return readAllEvents(this.#directory, this.#cache, options);
  }

  /** `readAll` a page at a time: a page is the events of one read of the global index, 512 records (at most `pageSize`). */
  readAllPages(options: ReadAllPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readAllPages(this.#directory, this.#cache, options);
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#directory.assertOpen();
    this.#startPolling();
    return catchUpThenLive(allSource(this, options.partition), this.#notifier, options.after ?? null, options.signal);
  }

  revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    return revisionOf(this.#directory, this.#cache, stream);
  }

  async close(): Promise<void> {
    if (this.#directory.closed) return;
    this.#directory.closed = true;
    await this.#queue.drain();
    if (this.#poller) clearInterval(this.#poller);
    try {
      this.#lock?.dispose();
    } finally {
      this.#notifier.close();
      await this.#directory.closeFiles();
    }
  }

  /**
   * Crash recovery, run at open under the directory lock (see open-recovery.ts).
   * @internal
   */
  async recoverAll(): Promise<void> {
    if (this.#lock) await recoverDirectory(this.#directory, this.#cache);
    else this.#unread = await verifyReadOnly(this.#directory, this.#cache);
  }

  /**
   * Opened read-only: what a crash left that a writable open would repair and this store leaves alone and does not
   * read, one line each (an unfinished commit's bytes, a stream creation's temporary file, a deletion log's torn
   * last line, group-journal commits the index lacks). Empty when there is none, and always for a writable open (which repaired them).
   */
  get unread(): readonly string[] {
    return this.#unread;
  }

  /** Cross-process live updates: watch the index size while subscriptions exist (in-process appends notify at once). */
  #startPolling(): void {
    if (this.#poller || this.#directory.closed) return;
    this.#poller = setInterval(() => {
      this.#directory.fs.sizeOf(this.#directory.indexPath).then(
        (size) => {
          if (size !== undefined && size !== this.#polledIndexSize) {
            this.#polledIndexSize = size;
            this.#notifier.notify();
          }
        },
        () => undefined,
      );
    }, this.#pollIntervalMs);
    this.#poller.unref();
  }
}

