import { join } from 'node:path';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamRevision,
  type SubscribeAllOptions,
  type SubscribeOptions,
  type SubscriptionMessage,
} from '../../../runtime/ports/event-store.js';
import { StoreCorruptError, StoreIoError } from '../../../runtime/ports/store-errors.js';
import { assertValidBatch, assertValidExpected, assertValidStreamId, DEFAULT_MAX_EVENT_BYTES } from '../../../runtime/ports/store-validation.js';
import { catchUpThenLive } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';
import { DirectoryLock } from './dir-lock.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { isErrnoCode, nodeFsOps, type FileOps, type FsOps } from './fs-ops.js';
import { INDEX_FILE } from './global-index.js';
import { CommitQueue } from './group-commit.js';
import { JOURNAL_FILE, replayJournalIndex, replayJournalStreams } from './group-journal.js';
import { committedTail, streamOfFile } from './recovery.js';
import { io, STREAMS_DIR, StoreDirectory } from './store-directory.js';
import type { JsonlEventStoreOptions } from './store-options.js';
import { StreamCache } from './stream-cache.js';
import { readAllEvents, readStream, revisionOf } from './event-reads.js';
import { commitAppends, type PendingAppend } from './commit-appends.js';
import { recoverIndex } from './writer-state.js';

/** Opens (creating if needed) a JSONL event store in `dir`, repairing what a crash left behind. */
export const openJsonlEventStore = async (dir: string, options: JsonlEventStoreOptions = {}): Promise<JsonlEventStore> => {
  const fs = options.fs ?? nodeFsOps;
  try {
    await fs.mkdir(join(dir, STREAMS_DIR));
  } catch (e) {
    throw new StoreIoError('open', { cause: e });
  }
  const lock = new DirectoryLock(dir, options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs });
  try {
    await lock.acquire();
    const indexPath = join(dir, INDEX_FILE);
    if ((await fs.sizeOf(indexPath)) === undefined && (await fs.readdir(join(dir, STREAMS_DIR))).some((n) => hashOfFileName(n) !== undefined)) {
      // Without the index every line would look uncommitted and be cut: refuse instead.
      throw new StoreCorruptError(indexPath, 0, 'the global index is missing but stream files exist');
    }
    let created = false;
    for (const path of [indexPath, join(dir, JOURNAL_FILE)]) {
      try {
        const h = await fs.open(path, 'create');
        await h.close();
        created = true;
      } catch (e) {
        if (!isErrnoCode(e, 'EEXIST')) throw new StoreIoError('open', { cause: e });
      }
    }
    if (created && options.durability !== 'none') {
      await fs.syncDir(dir);
      await fs.syncDir(join(dir, STREAMS_DIR));
    }
    const indexWrite = await fs.open(indexPath, 'update');
    const indexRead = await fs.open(indexPath, 'read');
    const journal = await fs.open(join(dir, JOURNAL_FILE), 'update');
    const store = new JsonlEventStore(dir, fs, lock, { indexWrite, indexRead, journal }, options);
    try {
      await store.recoverAll();
    } catch (e) {
      lock.release();
      await store.close();
      throw e;
    }
    return store;
  } catch (e) {
    lock.dispose();
    throw e;
  } finally {
    lock.release();
  }
};

/** The EventStore port on a directory of JSONL files. See docs/store-jsonl.md. */
export class JsonlEventStore implements EventStore {
  readonly #directory: StoreDirectory;
  readonly #cache: StreamCache;
  readonly #lock: DirectoryLock;
  readonly #maxEventBytes: number;
  readonly #pollIntervalMs: number;
  readonly #queue: CommitQueue<PendingAppend>;
  readonly #notifier = new ChangeNotifier();
  #poller: NodeJS.Timeout | undefined;
  #polledIndexSize = -1;

  /** @internal use openJsonlEventStore */
  constructor(dir: string, fs: FsOps, lock: DirectoryLock, files: { indexWrite: FileOps; indexRead: FileOps; journal: FileOps }, options: JsonlEventStoreOptions) {
    this.#directory = new StoreDirectory(dir, fs, files, options.durability ?? 'fsync');
    this.#cache = new StreamCache(this.#directory);
    this.#lock = lock;
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#pollIntervalMs = options.pollIntervalMs ?? 100;
    const context = { directory: this.#directory, cache: this.#cache, lock, notifier: this.#notifier };
    this.#queue = new CommitQueue((items) => commitAppends(context, items), this.#directory.durability === 'group' ? (options.maxGroupAppends ?? 1024) : 1);
  }

  get directory(): string {
    return this.#directory.dir;
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
    const copy = events.map((e) => ({ ...e, data: structuredClone(e.data) }));
    return new Promise<AppendResult>((resolve, reject) => this.#queue.push({ stream, events: copy, expected, resolve, reject }));
  }

  read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    return readStream(this.#directory, this.#cache, stream, options);
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#directory.assertOpen();
    assertValidStreamId(stream);
    this.#startPolling();
    const from = options.from ?? 0n;
    return catchUpThenLive(
      {
        readAfter: (cursor) => this.read(stream, { from: cursor === null ? from : cursor + 1n }),
        cursorOf: (e) => e.revision,
      },
      this.#notifier,
      null,
      options.signal,
    );
  }

  readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    return readAllEvents(this.#directory, this.#cache, options);
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#directory.assertOpen();
    this.#startPolling();
    return catchUpThenLive(
      {
        readAfter: (cursor) => this.readAll(cursor === null ? {} : { after: cursor }),
        cursorOf: (e) => e.position,
      },
      this.#notifier,
      options.after ?? null,
      options.signal,
    );
  }

  revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    return revisionOf(this.#directory, this.#cache, stream);
  }

  async close(): Promise<void> {
    if (this.#directory.closed) return;
    this.#directory.closed = true;
    await this.#queue.drain();
    if (this.#poller) clearInterval(this.#poller);
    this.#lock.dispose();
    this.#notifier.close();
    await this.#directory.closeFiles();
  }

  /**
   * Crash recovery, run at open under the directory lock: cuts an unfinished batch off the index, and every
   * stream file back to its last committed line (a torn line, or lines whose batch never reached the index).
   * Complete committed lines are never rewritten.
   * @internal
   */
  async recoverAll(): Promise<void> {
    const context = this.#directory.journalContext();
    const journaled = await io('open', () => replayJournalIndex(context));
    const index = await recoverIndex(this.#directory);
    await io('open', () => replayJournalStreams(context, journaled, index));
    await io('open', () => this.#directory.checkpoint());
    const names = await io('open', () => this.#directory.fs.readdir(this.#directory.streamsDir));
    for (const name of names) {
      if (name.includes('.tmp-')) {
        await io('open', () => this.#directory.fs.unlink(join(this.#directory.streamsDir, name)));
        continue;
      }
      const hash = hashOfFileName(name);
      if (hash === undefined) continue;
      this.#cache.fileOfHash.set(hash, name);
      const path = join(this.#directory.streamsDir, name);
      const file = await io('open', () => this.#directory.fs.open(path, 'update'));
      try {
        const size = await file.size();
        const stream = await streamOfFile(file, name);
        if (streamFileName(stream).hash !== hash) throw new StoreCorruptError(name, 0, `file name does not match its stream ${JSON.stringify(stream)}`, 1);
        this.#cache.streamOfHash.set(hash, stream);
        const tail = await committedTail(file, name, size, stream, hash, index);
        if (tail.end < size) await this.#directory.cut(file, tail.end, 'recovery');
      } finally {
        await file.close();
      }
    }
    await this.#directory.trimWriteHandles();
  }

  // ---- commit path (runs one group at a time, under the directory lock) ----









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

