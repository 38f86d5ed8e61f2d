import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { deepFreeze } from '../../../domain/json.js';
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
import {
  isStoreError,
  StoreClosedError,
  StoreCorruptError,
  StoreIoError,
} from '../../../runtime/ports/store-errors.js';
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
import { encodeIndexRecords, INDEX_FILE, readExactly, readIndexRecords, viewIndex, type IndexView } from './global-index.js';
import { CommitQueue } from './group-commit.js';
import { checkpointJournal, encodeJournalRecord, JOURNAL_FILE, replayJournalIndex, replayJournalStreams, type JournalContext } from './group-journal.js';
import { decodeLine, encodeEventLine, encodeHeaderLine, INDEX_RECORD_BYTES, type IndexRecord, type StoredEvent } from './line-codec.js';
import { committedTail, headerOf, scanCommitted, streamOfFile, type IndexLookup } from './recovery.js';
import { backwardLines, forwardLines } from './stream-file.js';

/**
 * - `fsync` (default): every append is its own commit: stream file written + fsynced, then its index records
 *   written + fsynced, before the promise resolves.
 * - `group`: appends that queue up while a commit is running share the next commit (same two fsyncs per touched
 *   file); each is still acknowledged only after its data is fsynced.
 * - `none`: no fsync at all (tests, throwaway data): a power loss can lose acknowledged events; a process crash cannot.
 */
export type JsonlDurability = 'fsync' | 'group' | 'none';

export interface JsonlEventStoreOptions {
  /** @defaultValue 'fsync' */
  readonly durability?: JsonlDurability;
  /** Largest serialized event accepted (EventTooLargeError above). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** In `group` mode, the most append calls sharing one commit. @defaultValue 1024 */
  readonly maxGroupAppends?: number;
  /** How often live subscriptions look for appends made by other processes. @defaultValue 100 */
  readonly pollIntervalMs?: number;
  /** How long an append waits for another process's commit before failing with `store-io`. @defaultValue 30_000 */
  readonly lockTimeoutMs?: number;
  /** File-system calls (tests inject failures here). @defaultValue node:fs */
  readonly fs?: FsOps;
}

interface StreamState {
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
  readonly revisionOfId: Map<string, number>;
}

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

const STREAMS_DIR = 'streams';
const READ_ALL_PAGE = 512;
const WRITE_HANDLES = 128;
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
  readonly #dir: string;
  readonly #streamsDir: string;
  readonly #indexPath: string;
  readonly #fs: FsOps;
  readonly #lock: DirectoryLock;
  readonly #indexWrite: FileOps;
  readonly #indexRead: FileOps;
  readonly #journal: FileOps;
  /** Journal byte size after this instance's last journal write or checkpoint; -1 when unknown. */
  #journalKnownSize = -1;
  readonly #durability: JsonlDurability;
  readonly #maxEventBytes: number;
  readonly #pollIntervalMs: number;
  readonly #queue: CommitQueue<PendingAppend>;
  readonly #notifier = new ChangeNotifier();
  readonly #states = new Map<string, StreamState>();
  readonly #fileOfHash = new Map<string, string>();
  readonly #streamOfHash = new Map<string, string>();
  readonly #writeHandles = new Map<string, FileOps>();
  /** Per stream: the revision whose line starts at `offset` (a committed line boundary). */
  readonly #readHints = new Map<string, { rev: number; offset: number }>();
  #poller: NodeJS.Timeout | undefined;
  /** Index byte size after this instance's last commit or recovery (a committed size). */
  #lastIndexSize = -1;
  #polledIndexSize = -1;
  #closed = false;

  /** @internal use openJsonlEventStore */
  constructor(dir: string, fs: FsOps, lock: DirectoryLock, files: { indexWrite: FileOps; indexRead: FileOps; journal: FileOps }, options: JsonlEventStoreOptions) {
    this.#dir = dir;
    this.#streamsDir = join(dir, STREAMS_DIR);
    this.#indexPath = join(dir, INDEX_FILE);
    this.#fs = fs;
    this.#lock = lock;
    this.#indexWrite = files.indexWrite;
    this.#indexRead = files.indexRead;
    this.#journal = files.journal;
    this.#durability = options.durability ?? 'fsync';
    this.#maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.#pollIntervalMs = options.pollIntervalMs ?? 100;
    this.#queue = new CommitQueue((items) => this.#commit(items), this.#durability === 'group' ? (options.maxGroupAppends ?? 1024) : 1);
  }

  get directory(): string {
    return this.#dir;
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    try {
      this.#assertOpen();
      assertValidStreamId(stream);
      assertValidExpected(expected);
      assertValidBatch(stream, events, this.#maxEventBytes);
    } catch (e) {
      return Promise.reject(e);
    }
    const copy = events.map((e) => ({ ...e, data: structuredClone(e.data) }));
    return new Promise<AppendResult>((resolve, reject) => this.#queue.push({ stream, events: copy, expected, resolve, reject }));
  }

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const { path, fileName } = this.#names(stream);
    const size = await this.#io('read', () => this.#fs.sizeOf(path));
    if (size === undefined) return;
    const file = await this.#io('read', () => this.#fs.open(path, 'read'));
    try {
      const tail = await this.#tailOf(stream, file, fileName, size);
      const max = options.maxCount ?? Number.POSITIVE_INFINITY;
      if (max <= 0 || tail.lastRevision < 0) return;
      let count = 0;
      if ((options.direction ?? 'forwards') === 'forwards') {
        const from = Number(options.from ?? 0n);
        // Committed bytes never change, so a remembered (revision, offset) pair lets a read (a live subscription,
        // typically) start mid-file instead of rescanning from the header.
        const hint = this.#readHints.get(stream);
        const useHint = hint !== undefined && hint.rev <= from && hint.offset <= tail.end;
        let rev = useHint ? hint.rev : 0;
        let line: number | undefined = useHint ? undefined : 1;
        for await (const raw of forwardLines(file, useHint ? hint.offset : tail.headerEnd, tail.end)) {
          if (line !== undefined) line++;
          if (rev >= from) {
            const event = this.#decodeEvent(raw.bytes, fileName, raw.offset, line, rev);
            this.#readHints.set(stream, { rev: rev + 1, offset: raw.offset + raw.bytes.length + 1 });
            yield this.#recorded(stream, event);
            if (++count >= max) return;
          }
          rev++;
        }
      } else {
        const from = options.from === undefined ? tail.lastRevision : Math.min(Number(options.from), tail.lastRevision);
        let rev = tail.lastRevision;
        for await (const raw of backwardLines(file, tail.end)) {
          if (raw.offset < tail.headerEnd) return;
          if (rev <= from) {
            yield this.#recorded(stream, this.#decodeEvent(raw.bytes, fileName, raw.offset, undefined, rev));
            if (++count >= max) return;
          }
          rev--;
        }
      }
    } finally {
      await file.close();
    }
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
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

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    this.#assertOpen();
    const view = await this.#io('readAll', () => viewIndex(this.#indexRead, this.#indexPath));
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    let p = options.after === undefined ? 0 : Number(options.after) + 1;
    let count = 0;
    const files = new Map<string, FileOps>();
    try {
      while (p < view.count && count < max) {
        const n = Math.min(READ_ALL_PAGE, view.count - p, max - count);
        const records = await readIndexRecords(this.#indexRead, this.#indexPath, p, n);
        let i = 0;
        while (i < records.length) {
          // One read for a run of records that are contiguous in the same file (one batch, usually).
          let j = i + 1;
          while (
            j < records.length &&
            records[j]!.fileHash === records[i]!.fileHash &&
            records[j]!.offset === records[j - 1]!.offset + records[j - 1]!.length + 1
          ) {
            j++;
          }
          for (const event of await this.#readRun(files, records.slice(i, j), p + i)) {
            yield event;
            count++;
          }
          i = j;
        }
        p += n;
      }
    } finally {
      for (const f of files.values()) await f.close();
    }
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    this.#assertOpen();
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

  async revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    this.#assertOpen();
    const { path, fileName } = this.#names(stream);
    const size = await this.#io('revision', () => this.#fs.sizeOf(path));
    if (size === undefined) return 'no_stream';
    const file = await this.#io('revision', () => this.#fs.open(path, 'read'));
    try {
      const tail = await this.#tailOf(stream, file, fileName, size);
      return tail.lastRevision < 0 ? 'no_stream' : streamRevision(tail.lastRevision);
    } finally {
      await file.close();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.drain();
    if (this.#poller) clearInterval(this.#poller);
    this.#lock.dispose();
    this.#notifier.close();
    await this.#indexWrite.close().catch(() => undefined);
    await this.#journal.close().catch(() => undefined);
    for (const h of this.#writeHandles.values()) await h.close().catch(() => undefined);
    this.#writeHandles.clear();
    await this.#indexRead.close().catch(() => undefined);
  }

  /**
   * Crash recovery, run at open under the directory lock: cuts an unfinished batch off the index, and every
   * stream file back to its last committed line (a torn line, or lines whose batch never reached the index).
   * Complete committed lines are never rewritten.
   * @internal
   */
  async recoverAll(): Promise<void> {
    const context = this.#journalContext();
    const journaled = await this.#io('open', () => replayJournalIndex(context));
    const index = await this.#recoverIndex();
    await this.#io('open', () => replayJournalStreams(context, journaled, index));
    await this.#io('open', () => this.#checkpoint());
    const names = await this.#io('open', () => this.#fs.readdir(this.#streamsDir));
    for (const name of names) {
      if (name.includes('.tmp-')) {
        await this.#io('open', () => this.#fs.unlink(join(this.#streamsDir, name)));
        continue;
      }
      const hash = hashOfFileName(name);
      if (hash === undefined) continue;
      this.#fileOfHash.set(hash, name);
      const path = join(this.#streamsDir, name);
      const file = await this.#io('open', () => this.#fs.open(path, 'update'));
      try {
        const size = await file.size();
        const stream = await streamOfFile(file, name);
        if (streamFileName(stream).hash !== hash) throw new StoreCorruptError(name, 0, `file name does not match its stream ${JSON.stringify(stream)}`, 1);
        this.#streamOfHash.set(hash, stream);
        const tail = await committedTail(file, name, size, stream, hash, index);
        if (tail.end < size) await this.#cut(file, tail.end, 'recovery');
      } finally {
        await file.close();
      }
    }
    await this.#trimWriteHandles();
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
      for (const d of drafts.values()) this.#states.delete(d.state.stream); // reload from disk next time
    } finally {
      this.#lock.release();
      await this.#trimWriteHandles();
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
    const sync = this.#durability !== 'none';
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
    const useJournal = this.#durability === 'group' && journaled.reduce((n, p) => n + p.end - p.draft.state.size, 0) <= JOURNAL_RECORD_LIMIT;
    const indexBytes = encodeIndexRecords(records);
    let journalStart = -1;
    let journalEnd = -1;
    try {
      if (useJournal) {
        const size = await this.#journal.size();
        if (size !== this.#journalKnownSize || size > JOURNAL_LIMIT) await this.#checkpoint();
        journalStart = this.#journalKnownSize;
      }
      // allSettled, not all: the rollback must not start while another file's write is still in flight.
      const written = await Promise.allSettled(
        pieces.map(async ({ draft, headerBytes }) => {
          const body = Buffer.concat(draft.lines);
          if (headerBytes) {
            const tmp = `${draft.state.path}.tmp-${randomBytes(6).toString('hex')}`;
            const entry = { path: draft.state.path, tmp, linked: false };
            created.push(entry);
            const file = await this.#fs.open(tmp, 'create');
            try {
              await file.write(Buffer.concat([headerBytes, body]), 0);
              if (sync) await file.sync();
            } finally {
              await file.close();
            }
            await this.#fs.link(tmp, draft.state.path);
            entry.linked = true;
            await this.#fs.unlink(tmp);
          } else {
            const file = await this.#writeHandle(draft.state.path);
            touched.push({ file, size: draft.state.size });
            await file.write(body, draft.state.size);
            if (sync && !useJournal) await file.sync();
          }
        }),
      );
      const failed = written.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      if (created.length > 0 && sync) await this.#fs.syncDir(this.#streamsDir);
      if (useJournal) {
        const record = encodeJournalRecord({
          streams: journaled.map((p) => ({ file: p.draft.state.fileName, offset: p.draft.state.size, bytes: Buffer.concat(p.draft.lines) })),
          index: { first: indexCount, bytes: indexBytes },
        });
        journalEnd = journalStart + record.length;
        await this.#journal.write(record, journalStart);
        await this.#journal.sync();
      }
      indexTouched = true;
      await this.#indexWrite.write(indexBytes, indexCount * INDEX_RECORD_BYTES);
      if (sync && !useJournal) await this.#indexWrite.sync();
      this.#lastIndexSize = (indexCount + records.length) * INDEX_RECORD_BYTES;
      if (useJournal) this.#journalKnownSize = journalEnd;
    } catch (e) {
      const cause = e;
      try {
        if (indexTouched) {
          await this.#indexWrite.truncate(indexCount * INDEX_RECORD_BYTES);
          if (sync) await this.#indexWrite.sync();
        }
        if (journalEnd >= 0) {
          this.#journalKnownSize = -1;
          await this.#journal.truncate(journalStart);
          await this.#journal.sync();
          this.#journalKnownSize = journalStart;
        }
        for (const t of touched) {
          await t.file.truncate(t.size);
          if (sync) await t.file.sync();
        }
        for (const c of created) {
          if (c.linked) await this.#fs.unlink(c.path);
          await this.#fs.unlink(c.tmp).catch((err: unknown) => {
            if (!isErrnoCode(err, 'ENOENT')) throw err;
          });
        }
        if (created.length > 0 && sync) await this.#fs.syncDir(this.#streamsDir);
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
        this.#fileOfHash.set(s.hash, s.fileName);
        this.#streamOfHash.set(s.hash, s.stream);
      }
      s.size = p.end;
      s.lastRevision = p.draft.lastRevision;
      this.#readHints.set(s.stream, { rev: s.lastRevision + 1, offset: s.size });
      s.positions.push(...p.draft.newPositions);
      for (const [id, rev] of p.draft.newIds) s.revisionOfId.set(id, rev);
    }
  }

  /** Under the lock: fsync every stream file the journal names and the index, then empty the journal. */
  async #checkpoint(): Promise<void> {
    this.#journalKnownSize = -1;
    await checkpointJournal(this.#journalContext());
    this.#journalKnownSize = 0;
  }

  #journalContext(): JournalContext {
    return {
      fs: this.#fs,
      journal: this.#journal,
      index: this.#indexWrite,
      indexPath: this.#indexPath,
      streamsDir: this.#streamsDir,
      writeHandle: (path) => this.#writeHandle(path),
    };
  }

  /** Under the lock: the committed prefix of the index, cutting an unfinished batch a crashed writer left. */
  async #recoverIndex(): Promise<IndexLookup & { readonly unchanged: boolean }> {
    const size = await this.#io('append', () => this.#indexWrite.size());
    // Unchanged since our last commit: no other writer committed (or crashed half-way through its index write).
    const unchanged = size === this.#lastIndexSize && size % INDEX_RECORD_BYTES === 0;
    const view: IndexView = unchanged ? { count: size / INDEX_RECORD_BYTES, size } : await this.#io('append', () => viewIndex(this.#indexWrite, this.#indexPath));
    if (view.size !== view.count * INDEX_RECORD_BYTES) await this.#cut(this.#indexWrite, view.count * INDEX_RECORD_BYTES, 'recovery');
    this.#lastIndexSize = view.count * INDEX_RECORD_BYTES;
    return { file: this.#indexRead, path: this.#indexPath, view, unchanged };
  }

  /** Under the lock: the stream's committed state, loading it or catching up with other writers, cutting leftovers. */
  async #writerState(stream: string, index: IndexLookup & { readonly unchanged: boolean }): Promise<StreamState> {
    let state = this.#states.get(stream);
    // Nobody else committed since our last commit, so a stream we know is as we left it. (A crashed writer's
    // uncommitted lines past its end would be overwritten by ours or cut by the next full refresh.)
    if (state?.exists && index.unchanged) return state;
    if (!state) {
      const { hash, fileName, path } = this.#names(stream);
      state = { stream, hash, fileName, path, exists: false, size: 0, headerEnd: 0, lastRevision: -1, positions: [], revisionOfId: new Map() };
    }
    const size = await this.#io('append', () => this.#fs.sizeOf(state.path));
    if (size === undefined) {
      if (state.exists) throw new StoreCorruptError(state.fileName, 0, 'stream file disappeared');
      this.#states.set(stream, state);
      return state;
    }
    if (state.exists && size === state.size) return state;
    if (state.exists && size < state.size) throw new StoreCorruptError(state.fileName, size, `file shrank below its committed length ${state.size}`);
    const file = await this.#io('append', () => this.#writeHandle(state.path));
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
      if (scan.end < size) await this.#cut(file, scan.end, 'append');
    }
    this.#states.set(stream, state);
    return state;
  }

  /** Write handles stay open between commits; #trimWriteHandles closes the least recently used after each. */
  async #writeHandle(path: string): Promise<FileOps> {
    let file = this.#writeHandles.get(path);
    if (file) {
      this.#writeHandles.delete(path);
      this.#writeHandles.set(path, file); // most recently used last
      return file;
    }
    file = await this.#fs.open(path, 'update');
    const raced = this.#writeHandles.get(path);
    if (raced) {
      await file.close();
      return raced;
    }
    this.#writeHandles.set(path, file);
    return file;
  }

  /** Between commits only (a group may use more than WRITE_HANDLES files while it runs). */
  async #trimWriteHandles(): Promise<void> {
    while (this.#writeHandles.size > WRITE_HANDLES) {
      const [oldest, handle] = this.#writeHandles.entries().next().value as [string, FileOps];
      this.#writeHandles.delete(oldest);
      await handle.close().catch(() => undefined);
    }
  }

  async #cut(file: FileOps, length: number, operation: string): Promise<void> {
    await this.#io(operation, async () => {
      await file.truncate(length);
      if (this.#durability !== 'none') await file.sync();
    });
  }

  // ---- read path ----

  async #tailOf(stream: string, file: FileOps, fileName: string, size: number): Promise<{ end: number; headerEnd: number; lastRevision: number }> {
    const state = this.#states.get(stream);
    if (state?.exists && state.size === size) return { end: size, headerEnd: state.headerEnd, lastRevision: state.lastRevision };
    const view = await viewIndex(this.#indexRead, this.#indexPath);
    return committedTail(file, fileName, size, stream, this.#names(stream).hash, { file: this.#indexRead, path: this.#indexPath, view });
  }

  async #readRun(files: Map<string, FileOps>, run: IndexRecord[], firstPos: number): Promise<RecordedEvent[]> {
    const hash = run[0]!.fileHash;
    let file = files.get(hash);
    if (!file) {
      if (files.size >= 64) {
        for (const f of files.values()) await f.close();
        files.clear();
      }
      const name = await this.#fileNameOf(hash);
      file = await this.#fs.open(join(this.#streamsDir, name), 'read');
      files.set(hash, file);
    }
    const name = this.#fileOfHash.get(hash)!;
    let stream = this.#streamOfHash.get(hash);
    if (stream === undefined) {
      stream = await streamOfFile(file, name);
      this.#streamOfHash.set(hash, stream);
    }
    const start = run[0]!.offset;
    const last = run[run.length - 1]!;
    const bytes = await readExactly(file, start, last.offset + last.length + 1 - start, name);
    return run.map((r, i) => {
      const line = bytes.subarray(r.offset - start, r.offset - start + r.length);
      const decoded = decodeLine(line);
      if (typeof decoded === 'string' || decoded.kind !== 'event' || decoded.crc !== r.lineCrc || decoded.event.pos !== firstPos + i) {
        throw new StoreCorruptError(name, r.offset, typeof decoded === 'string' ? decoded : `line does not match index record ${firstPos + i}`);
      }
      return this.#recorded(stream, decoded.event);
    });
  }

  async #fileNameOf(hash: string): Promise<string> {
    let name = this.#fileOfHash.get(hash);
    if (name === undefined) {
      for (const n of await this.#fs.readdir(this.#streamsDir)) {
        const h = hashOfFileName(n);
        if (h !== undefined) this.#fileOfHash.set(h, n);
      }
      name = this.#fileOfHash.get(hash);
      if (name === undefined) throw new StoreCorruptError(this.#indexPath, 0, `index refers to a missing stream file (hash ${hash})`);
    }
    return name;
  }

  #decodeEvent(bytes: Buffer, fileName: string, offset: number, line: number | undefined, expectedRev: number): StoredEvent {
    const decoded = decodeLine(bytes);
    if (typeof decoded === 'string') throw new StoreCorruptError(fileName, offset, decoded, line);
    if (decoded.kind !== 'event') throw new StoreCorruptError(fileName, offset, 'unexpected header line', line);
    if (decoded.event.rev !== expectedRev) throw new StoreCorruptError(fileName, offset, `revision ${decoded.event.rev}, expected ${expectedRev}`, line);
    return decoded.event;
  }

  #recorded(stream: string, e: StoredEvent): RecordedEvent {
    return deepFreeze({
      stream,
      revision: streamRevision(e.rev),
      position: globalPosition(e.pos),
      id: e.id,
      type: e.type,
      time: e.time,
      data: e.data,
      ...(e.ignorable ? { ignorable: true as const } : {}),
    });
  }

  #names(stream: string): { hash: string; fileName: string; path: string } {
    const { hash, fileName } = streamFileName(stream);
    return { hash, fileName, path: join(this.#streamsDir, fileName) };
  }

  /** Cross-process live updates: watch the index size while subscriptions exist (in-process appends notify at once). */
  #startPolling(): void {
    if (this.#poller || this.#closed) return;
    this.#poller = setInterval(() => {
      this.#fs.sizeOf(this.#indexPath).then(
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

  async #io<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (isStoreError(e)) throw e;
      throw new StoreIoError(operation, { cause: e });
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreClosedError();
  }
}

const crcOf = (line: Buffer): number => Number.parseInt(line.toString('latin1', 6, 14), 16);

