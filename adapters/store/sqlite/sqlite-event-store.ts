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
import { type FoldSnapshot, type FoldSnapshotSource, type SnapshotRange } from '../../../runtime/ports/fold-snapshots.js';
import type { SessionCatalogPage, SessionCatalogQuery, SessionCatalogSource } from '../../../runtime/ports/session-catalog.js';
import { StoreError } from '../../../runtime/ports/store-errors.js';
import type { DeleteStreamOptions, StreamDeletion } from '../../../runtime/ports/stream-deletion.js';
import { DEFAULT_MAX_EVENT_BYTES, assertValidStreamId } from '../../../runtime/ports/store-validation.js';
import { allSource, catchUpThenLive, streamSource } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';
import { appendEvents } from './append-events.js';
import { deleteStoredStream } from './delete-stream.js';
import { connectSqlite, isSqliteDriverUnbuiltError, type SqliteDatabase } from './driver.js';
import { readAllPages, readStreamPages, revisionOf } from './event-reads.js';
import { appendSnapshots, loadSnapshots, loadSnapshotsNear, saveSnapshots } from './fold-snapshots.js';
import { setUpConnection } from './schema.js';
import { listCatalog, rebuildCatalog } from './session-catalog.js';
import { assertOpen, statementCache, type SqliteContext } from './store-context.js';

/** Options of the SQLite store. */
export interface SqliteEventStoreOptions {
  /**
   * `full`: SQLite's `synchronous=FULL`, every commit is on disk when `append` resolves. `normal`:
   * `synchronous=NORMAL` (in WAL mode the last commits may be lost on power loss; the file is never damaged).
   * @defaultValue 'full'
   */
  readonly durability?: 'full' | 'normal';
  /** Open for reading only: nothing is created or written; the file must hold a store. @defaultValue false */
  readonly readOnly?: boolean;
  /** Largest serialized event accepted (as the port measures it). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** Rows per query of `read`, `readAll` and the catch-up part of subscriptions. @defaultValue 1000 */
  readonly readPageSize?: number;
  /** How long a writer waits for another connection's write transaction (`busy_timeout`). @defaultValue 5000 */
  readonly busyTimeoutMs?: number;
  /**
   * While subscriptions are open, how often the store asks SQLite whether another connection (another process)
   * committed (`PRAGMA data_version`); this process's own appends wake them at once. @defaultValue 200
   */
  readonly pollIntervalMs?: number;
}

/** The defaults of {@link SqliteEventStoreOptions}. */
export const SQLITE_STORE_DEFAULTS = {
  durability: 'full',
  readPageSize: 1000,
  busyTimeoutMs: 5000,
  pollIntervalMs: 200,
} as const;

/**
 * Opens (and, unless read-only, creates) the SQLite event store in `file`.
 * @throws SqliteDriverUnbuiltError when `better-sqlite3` is installed without its native addon
 * @throws StoreError `store-io` when the file cannot be opened or holds another schema version
 */
export async function openSqliteEventStore(file: string, options: SqliteEventStoreOptions = {}): Promise<SqliteEventStore> {
  const readOnly = options.readOnly === true;
  let db: SqliteDatabase | undefined;
  try {
    db = connectSqlite(file, { readOnly, busyTimeoutMs: options.busyTimeoutMs ?? SQLITE_STORE_DEFAULTS.busyTimeoutMs });
    setUpConnection(db, file, { readOnly, synchronous: options.durability ?? SQLITE_STORE_DEFAULTS.durability });
  } catch (e) {
    db?.close();
    if (isSqliteDriverUnbuiltError(e) || e instanceof StoreError) throw e;
    throw new StoreError('store-io', `opening the SQLite store ${file}${readOnly ? ' read-only' : ''} failed: ${(e as Error).message}`, { cause: e });
  }
  return new SqliteEventStore(db, file, options);
}

/**
 * The EventStore port on an embedded SQLite database (experimental; see docs/store-sqlite.md): one file, one
 * connection, every append one immediate transaction that also keeps the session catalog. The work is done by the
 * modules beside this one (append-events, event-reads, delete-stream, session-catalog, fold-snapshots).
 */
export class SqliteEventStore implements EventStore, StreamDeletion, SessionCatalogSource, FoldSnapshotSource {
  /** The `db.system.name` telemetry gives this store's operations. */
  readonly dbSystem = 'sqlite';
  /** The database file. */
  readonly file: string;
  readonly #ctx: SqliteContext;
  readonly #notifier = new ChangeNotifier();
  readonly #pollIntervalMs: number;
  #following = 0;
  #poll: ReturnType<typeof setInterval> | undefined;
  #dataVersion = -1;
  #closed = false;

  /** Use {@link openSqliteEventStore}: it sets the connection up and creates the schema first. */
  constructor(db: SqliteDatabase, file: string, options: SqliteEventStoreOptions) {
    this.file = file;
    this.#pollIntervalMs = options.pollIntervalMs ?? SQLITE_STORE_DEFAULTS.pollIntervalMs;
    this.#ctx = {
      db,
      stmt: statementCache(db),
      readOnly: options.readOnly === true,
      pageSize: options.readPageSize ?? SQLITE_STORE_DEFAULTS.readPageSize,
      maxEventBytes: options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
      notifier: this.#notifier,
      isClosed: () => this.#closed,
    };
  }

  /** The largest event this store accepts (the `maxEventBytes` option). */
  get maxEventBytes(): number {
    return this.#ctx.maxEventBytes;
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    return appendEvents(this.#ctx, stream, events, expected);
  }

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    for await (const page of this.readPages(stream, options)) yield* page;
  }

  /** `read` a page at a time: keyset pages on the primary key (stream, revision), one query each. */
  readPages(stream: string, options: ReadPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readStreamPages(this.#ctx, stream, options);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    for await (const page of this.readAllPages(options)) yield* page;
  }

  /** `readAll` a page at a time: keyset pages on the position index, one query each. */
  readAllPages(options: ReadAllPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readAllPages(this.#ctx, options);
  }

  revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    try {
      return Promise.resolve(revisionOf(this.#ctx, stream));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Deletes a whole stream if its last revision is `expected` (StreamDeletion); see delete-stream.ts. */
  async deleteStream(stream: string, expected: StreamRevision, options: DeleteStreamOptions = {}): Promise<void> {
    deleteStoredStream(this.#ctx, stream, expected, options);
  }

  /** A page of the session catalog (`session_catalog`, kept in the append's transaction): one indexed query. */
  async listSessions(query: SessionCatalogQuery = {}): Promise<SessionCatalogPage> {
    return listCatalog(this.#ctx, query);
  }

  /** Folds the session catalog again from the events (appends wait meanwhile); the number of rows it then holds. */
  async rebuildSessionCatalog(): Promise<number> {
    return rebuildCatalog(this.#ctx);
  }

  async loadFoldSnapshots(stream: string): Promise<readonly FoldSnapshot[]> {
    return loadSnapshots(this.#ctx, stream);
  }

  /** The snapshots a fold of `range` needs (`snapshotsNear`), reading only their rows. */
  async loadFoldSnapshotsNear(stream: string, range: SnapshotRange): Promise<readonly FoldSnapshot[]> {
    return loadSnapshotsNear(this.#ctx, stream, range);
  }

  async saveFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<void> {
    saveSnapshots(this.#ctx, stream, snapshots);
  }

  /**
   * Adds snapshots past the stream's last one, one row each (fold-snapshots.ts `appendSnapshots`);
   * answers the seq of the stream's last snapshot after it (-1: none, or nothing could be written).
   */
  async appendFoldSnapshots(stream: string, snapshots: readonly FoldSnapshot[]): Promise<number> {
    return appendSnapshots(this.#ctx, stream, snapshots);
  }

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    assertOpen(this.#ctx);
    assertValidStreamId(stream);
    return this.#follow(catchUpThenLive(streamSource(this, stream, options.from), this.#notifier, null, options.signal));
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    assertOpen(this.#ctx);
    return this.#follow(catchUpThenLive(allSource(this, options.partition), this.#notifier, options.after ?? null, options.signal));
  }

  /** A live subscription: while any is open, the store polls `data_version` for other connections' commits. */
  async *#follow(messages: AsyncGenerator<SubscriptionMessage>): AsyncGenerator<SubscriptionMessage> {
    this.#following++;
    this.#startPolling();
    try {
      yield* messages;
    } finally {
      this.#following--;
      if (this.#following === 0) this.#stopPolling();
    }
  }

  #startPolling(): void {
    if (this.#poll !== undefined || this.#closed) return;
    this.#dataVersion = this.#readDataVersion();
    this.#poll = setInterval(() => {
      const now = this.#readDataVersion();
      if (now !== this.#dataVersion) {
        this.#dataVersion = now;
        this.#notifier.notify();
      }
    }, this.#pollIntervalMs);
    this.#poll.unref?.();
  }

  #stopPolling(): void {
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #readDataVersion(): number {
    if (this.#closed) return this.#dataVersion;
    try {
      return Number(this.#ctx.db.pragma('data_version', { simple: true }));
    } catch {
      return this.#dataVersion;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopPolling();
    this.#notifier.close();
    this.#ctx.db.close();
  }
}
