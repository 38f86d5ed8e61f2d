import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  globalPosition,
  streamRevision,
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
import { isStoreError, StoreCorruptError, StoreIoError } from '../../../runtime/ports/store-errors.js';
import {
  assertValidBatch,
  assertValidExpected,
  assertValidStreamId,
  concurrencyError,
  DEFAULT_MAX_EVENT_BYTES,
  expectedRevisionMatches,
  idempotencyVerdict,
} from '../../../runtime/ports/store-validation.js';
import { catchUpThenLive } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';
import { DirectoryLock } from './dir-lock.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { isErrnoCode, nodeFsOps, type FileOps, type FsOps } from './fs-ops.js';
import { encodeIndexRecords, INDEX_FILE, viewIndex, type IndexView } from './global-index.js';
import { CommitQueue } from './group-commit.js';
import { encodeJournalRecord, JOURNAL_FILE, replayJournalIndex, replayJournalStreams } from './group-journal.js';
import { encodeEventLine, encodeHeaderLine, INDEX_RECORD_BYTES, type IndexRecord, type StoredEvent } from './line-codec.js';
import { committedTail, headerOf, scanCommitted, streamOfFile, type IndexLookup } from './recovery.js';
import { io, STREAMS_DIR, StoreDirectory } from './store-directory.js';
import type { JsonlEventStoreOptions } from './store-options.js';
import { StreamCache, type StreamState } from './stream-cache.js';
import { readAllEvents, readStream, revisionOf } from './event-reads.js';

interface PendingAppend {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  readonly resolve: (r: AppendResult) => void;
  readonly reject: (e: unknown) => void;
}

interface Draft {
  readonly state: StreamState;
  readonly lines: Buffer[];
  readonly newIds: Map<string, number>;
  readonly newPositions: number[];
  lastRevision: number;
  bytes: number;
}

/** A checkpoint (fsync the journaled stream files, empty the journal) runs once the journal is this large. */
const JOURNAL_LIMIT = 8 * 1024 * 1024;
/** Larger groups fsync each stream file instead of copying their lines into the journal. */
const JOURNAL_RECORD_LIMIT = 4 * 1024 * 1024;

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
    this.#queue = new CommitQueue((items) => this.#commit(items), this.#directory.durability === 'group' ? (options.maxGroupAppends ?? 1024) : 1);
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
    const index = await this.#recoverIndex();
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

  async #commit(items: PendingAppend[]): Promise<void> {
    const results = new Map<PendingAppend, AppendResult>();
    const errors = new Map<PendingAppend, unknown>();
    const drafts = new Map<string, Draft>();
    let failure: unknown;
    try {
      await this.#lock.acquire();
    } catch (e) {
      for (const item of items) item.reject(e);
      return;
    }
    try {
      const index = await this.#recoverIndex();
      let nextPos = index.view.count;
      const refreshed = new Map<string, StreamState>();
      for (const item of items) {
        try {
          let state = refreshed.get(item.stream);
          if (!state) {
            state = await this.#writerState(item.stream, index);
            refreshed.set(item.stream, state);
          }
          let draft = drafts.get(item.stream);
          const lastRevision = draft?.lastRevision ?? state.lastRevision;
          const revisionOfId = (id: string): bigint | undefined => {
            const r = draft?.newIds.get(id) ?? state.revisionOfId.get(id);
            return r === undefined ? undefined : BigInt(r);
          };
          const positionOf = (rev: number): number => (rev < state.positions.length ? state.positions[rev]! : draft!.newPositions[rev - state.positions.length]!);
          const verdict = idempotencyVerdict(item.stream, item.events, revisionOfId);
          if (verdict.kind === 'already-appended') {
            const rev = Number(verdict.lastRevision);
            results.set(item, { nextExpectedRevision: streamRevision(rev), position: globalPosition(positionOf(rev)) });
            continue;
          }
          const actual = lastRevision < 0 ? 'no_stream' : streamRevision(lastRevision);
          if (!expectedRevisionMatches(item.expected, actual)) throw concurrencyError(item.stream, item.expected, actual);
          if (item.events.length === 0) {
            results.set(item, {
              nextExpectedRevision: streamRevision(lastRevision),
              position: globalPosition(lastRevision < 0 ? -1 : positionOf(lastRevision)),
            });
            continue;
          }
          if (!draft) {
            draft = { state, lines: [], newIds: new Map(), newPositions: [], lastRevision: state.lastRevision, bytes: 0 };
            drafts.set(item.stream, draft);
          }
          for (const e of item.events) {
            const rev = ++draft.lastRevision;
            const pos = nextPos++;
            const stored: StoredEvent = { rev, pos, id: e.id, type: e.type, time: e.time, data: e.data, ...(e.ignorable ? { ignorable: true as const } : {}) };
            draft.lines.push(encodeEventLine(stored).bytes);
            draft.newIds.set(e.id, rev);
            draft.newPositions.push(pos);
          }
          results.set(item, { nextExpectedRevision: streamRevision(draft.lastRevision), position: globalPosition(nextPos - 1) });
        } catch (e) {
          errors.set(item, e);
        }
      }
      if (drafts.size > 0) await this.#write([...drafts.values()], index.view.count);
    } catch (e) {
      failure = isStoreError(e) ? e : new StoreIoError('append', { cause: e });
      for (const d of drafts.values()) this.#cache.states.delete(d.state.stream); // reload from disk next time
    } finally {
      this.#lock.release();
      await this.#directory.trimWriteHandles();
    }
    for (const item of items) {
      const error = errors.get(item) ?? (failure !== undefined && results.has(item) ? failure : undefined);
      if (error !== undefined) item.reject(error);
      else item.resolve(results.get(item)!);
    }
    if (drafts.size > 0 && failure === undefined) this.#notifier.notify();
  }

  /** Writes every draft's lines, then the index records; fsyncs per the durability mode; rolls back on failure. */
  async #write(drafts: Draft[], indexCount: number): Promise<void> {
    const sync = this.#directory.durability !== 'none';
    const numbered: { pos: number; record: IndexRecord }[] = [];
    const pieces = drafts.map((d) => {
      const headerBytes = d.state.exists ? undefined : encodeHeaderLine(d.state.stream).bytes;
      let offset = d.state.exists ? d.state.size : headerBytes!.length;
      d.lines.forEach((line, i) => {
        numbered.push({ pos: d.newPositions[i]!, record: { fileHash: d.state.hash, offset, length: line.length - 1, lineCrc: crcOf(line), batchEnd: false } });
        offset += line.length;
      });
      return { draft: d, headerBytes, headerEnd: headerBytes?.length ?? d.state.headerEnd, end: offset };
    });
    // Index records in global-position order (appends of one group interleave streams); the group's last record
    // carries the batch-end mark: the whole group commits or none of it does.
    numbered.sort((a, b) => a.pos - b.pos);
    const records = numbered.map((n, i) => (i === numbered.length - 1 ? { ...n.record, batchEnd: true } : n.record));
    const created: { path: string; tmp: string; linked: boolean }[] = [];
    const touched: { file: FileOps; size: number }[] = [];
    let indexTouched = false;
    // Group mode: one fsync (the journal's) makes the stream lines and index records durable.
    const journaled = pieces.filter((p) => p.headerBytes === undefined);
    const useJournal = this.#directory.durability === 'group' && journaled.reduce((n, p) => n + p.end - p.draft.state.size, 0) <= JOURNAL_RECORD_LIMIT;
    const indexBytes = encodeIndexRecords(records);
    let journalStart = -1;
    let journalEnd = -1;
    try {
      if (useJournal) {
        const size = await this.#directory.journal.size();
        if (size !== this.#directory.journalKnownSize || size > JOURNAL_LIMIT) await this.#directory.checkpoint();
        journalStart = this.#directory.journalKnownSize;
      }
      // allSettled, not all: the rollback must not start while another file's write is still in flight.
      const written = await Promise.allSettled(
        pieces.map(async ({ draft, headerBytes }) => {
          const body = Buffer.concat(draft.lines);
          if (headerBytes) {
            const tmp = `${draft.state.path}.tmp-${randomBytes(6).toString('hex')}`;
            const entry = { path: draft.state.path, tmp, linked: false };
            created.push(entry);
            const file = await this.#directory.fs.open(tmp, 'create');
            try {
              await file.write(Buffer.concat([headerBytes, body]), 0);
              if (sync) await file.sync();
            } finally {
              await file.close();
            }
            await this.#directory.fs.link(tmp, draft.state.path);
            entry.linked = true;
            await this.#directory.fs.unlink(tmp);
          } else {
            const file = await this.#directory.writeHandle(draft.state.path);
            touched.push({ file, size: draft.state.size });
            await file.write(body, draft.state.size);
            if (sync && !useJournal) await file.sync();
          }
        }),
      );
      const failed = written.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (created.length > 0 && sync) await this.#directory.fs.syncDir(this.#directory.streamsDir);
      if (useJournal) {
        const record = encodeJournalRecord({
          streams: journaled.map((p) => ({ file: p.draft.state.fileName, offset: p.draft.state.size, bytes: Buffer.concat(p.draft.lines) })),
          index: { first: indexCount, bytes: indexBytes },
        });
        journalEnd = journalStart + record.length;
        await this.#directory.journal.write(record, journalStart);
        await this.#directory.journal.sync();
      }
      indexTouched = true;
      await this.#directory.indexWrite.write(indexBytes, indexCount * INDEX_RECORD_BYTES);
      if (sync && !useJournal) await this.#directory.indexWrite.sync();
      this.#directory.lastIndexSize = (indexCount + records.length) * INDEX_RECORD_BYTES;
      if (useJournal) this.#directory.journalKnownSize = journalEnd;
    } catch (e) {
      const cause = e;
      try {
        if (indexTouched) {
          await this.#directory.indexWrite.truncate(indexCount * INDEX_RECORD_BYTES);
          if (sync) await this.#directory.indexWrite.sync();
        }
        if (journalEnd >= 0) {
          this.#directory.journalKnownSize = -1;
          await this.#directory.journal.truncate(journalStart);
          await this.#directory.journal.sync();
          this.#directory.journalKnownSize = journalStart;
        }
        for (const t of touched) {
          await t.file.truncate(t.size);
          if (sync) await t.file.sync();
        }
        for (const c of created) {
          if (c.linked) await this.#directory.fs.unlink(c.path);
          await this.#directory.fs.unlink(c.tmp).catch((err: unknown) => {
            if (!isErrnoCode(err, 'ENOENT')) throw err;
          });
        }
        if (created.length > 0 && sync) await this.#directory.fs.syncDir(this.#directory.streamsDir);
      } catch (rollback) {
        throw new StoreIoError('append (rollback failed too; the next writer cuts what is left)', { cause: new AggregateError([cause, rollback]) });
      }
      throw new StoreIoError('append', { cause });
    }
    for (const p of pieces) {
      const s = p.draft.state;
      if (!s.exists) {
        s.exists = true;
        s.headerEnd = p.headerEnd;
        this.#cache.fileOfHash.set(s.hash, s.fileName);
        this.#cache.streamOfHash.set(s.hash, s.stream);
      }
      s.size = p.end;
      s.lastRevision = p.draft.lastRevision;
      this.#cache.readHints.set(s.stream, { rev: s.lastRevision + 1, offset: s.size });
      s.positions.push(...p.draft.newPositions);
      for (const [id, rev] of p.draft.newIds) s.revisionOfId.set(id, rev);
    }
  }

  /** Under the lock: the committed prefix of the index, cutting an unfinished batch a crashed writer left. */
  async #recoverIndex(): Promise<IndexLookup & { readonly unchanged: boolean }> {
    const size = await io('append', () => this.#directory.indexWrite.size());
    // Unchanged since our last commit: no other writer committed (or crashed half-way through its index write).
    const unchanged = size === this.#directory.lastIndexSize && size % INDEX_RECORD_BYTES === 0;
    const view: IndexView = unchanged ? { count: size / INDEX_RECORD_BYTES, size } : await io('append', () => viewIndex(this.#directory.indexWrite, this.#directory.indexPath));
    if (view.size !== view.count * INDEX_RECORD_BYTES) await this.#directory.cut(this.#directory.indexWrite, view.count * INDEX_RECORD_BYTES, 'recovery');
    this.#directory.lastIndexSize = view.count * INDEX_RECORD_BYTES;
    return { file: this.#directory.indexRead, path: this.#directory.indexPath, view, unchanged };
  }

  /** Under the lock: the stream's committed state, loading it or catching up with other writers, cutting leftovers. */
  async #writerState(stream: string, index: IndexLookup & { readonly unchanged: boolean }): Promise<StreamState> {
    let state = this.#cache.states.get(stream);
    // Nobody else committed since our last commit, so a stream we know is as we left it. (A crashed writer's
    // uncommitted lines past its end would be overwritten by ours or cut by the next full refresh.)
    if (state?.exists && index.unchanged) return state;
    if (!state) {
      const { hash, fileName, path } = this.#directory.names(stream);
      state = { stream, hash, fileName, path, exists: false, size: 0, headerEnd: 0, lastRevision: -1, positions: [], revisionOfId: new Map() };
    }
    const size = await io('append', () => this.#directory.fs.sizeOf(state.path));
    if (size === undefined) {
      if (state.exists) throw new StoreCorruptError(state.fileName, 0, 'stream file disappeared');
      this.#cache.states.set(stream, state);
      return state;
    }
    if (state.exists && size === state.size) return state;
    if (state.exists && size < state.size) throw new StoreCorruptError(state.fileName, size, `file shrank below its committed length ${state.size}`);
    const file = await io('append', () => this.#directory.writeHandle(state.path));
    {
      let start = state.size;
      if (!state.exists) {
        start = await headerOf(file, state.fileName, stream);
        state.headerEnd = start;
      }
      const scan = await scanCommitted(file, state.fileName, start, size, state.lastRevision, state.positions.at(-1) ?? -1, state.hash, index);
      for (const e of scan.entries) {
        state.positions.push(e.event.pos);
        state.revisionOfId.set(e.event.id, e.event.rev);
        state.lastRevision = e.event.rev;
      }
      state.exists = true;
      state.size = scan.end;
      if (scan.end < size) await this.#directory.cut(file, scan.end, 'append');
    }
    this.#cache.states.set(stream, state);
    return state;
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

const crcOf = (line: Buffer): number => Number.parseInt(line.toString('latin1', 6, 14), 16);

