import pg from 'pg';
import type { ClientConfig, Pool } from 'pg';
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
import { StoreError } from '../../../runtime/ports/store-errors.js';
import type { DeleteStreamOptions, StreamDeletion } from '../../../runtime/ports/stream-deletion.js';
import { assertValidStreamId, DEFAULT_MAX_EVENT_BYTES } from '../../../runtime/ports/store-validation.js';
import { allSource, streamSource } from '../shared/catch-up.js';
import { ChangeNotifier } from '../shared/change-notifier.js';
import { appendEvents, prepareAppend, type AppendContext } from './append-events.js';
import { AppendGroups } from './append-groups.js';
import { deleteStoredStream } from './delete-stream.js';
import { readAllPages, readStreamPages, revisionOf, type ReadContext } from './event-reads.js';
import { searchIndexed } from './text-search.js';
import { listCatalog, rebuildCatalog } from './session-catalog.js';
import type { SessionCatalogPage, SessionCatalogQuery, SessionCatalogSource } from '../../../runtime/ports/session-catalog.js';
import type { SearchQuery, SearchResult } from '../../../audit/session-search.js';
import type { Keyring } from '../../../runtime/content-opener.js';
import { LiveSubscriptions } from './live-subscriptions.js';
import { assertSchemaCurrent, assertValidSchemaName, migrate } from './migrations.js';
import { statements } from './statements.js';
import { assertOpen } from './store-context.js';

/** Options of the PostgreSQL store: the connection, schema, pool and subscription settings. */
export interface PostgresEventStoreOptions {
  /** Where to connect; the store creates (and `close()` ends) its own pool. One of `connectionString` or `pool` is required. */
  readonly connectionString?: string;
  /** A pool the caller owns: the store uses it and never ends it. */
  readonly pool?: Pool;
  /** Schema holding the store's tables; created by the migration. @defaultValue 'steerlog' */
  readonly schema?: string;
  /** Size of the pool the store creates from `connectionString`. @defaultValue 10 */
  readonly poolSize?: number;
  /** Largest serialized event accepted (as the port measures it). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** Rows fetched per query by `read`, `readAll` and the catch-up part of subscriptions. @defaultValue 1000 */
  readonly readPageSize?: number;
  /**
   * A batch whose serialized events exceed about this many bytes (counted in UTF-16 code units) is written as
   * several statements inside one transaction (still all-or-nothing). @defaultValue 16 MiB
   */
  readonly maxStatementBytes?: number;
  /**
   * The most appends one group commit carries: appends that queue while another is in flight (and those issued in the
   * same tick) go to the database together, in one statement and one transaction, each with its own concurrency
   * check and outcome (see docs/store-postgres.md, "Group commit"). At most 64 (a group that fails as a whole, on a
   * duplicate id, is written again append by append: the bound keeps that retry short); 1 writes every append on its
   * own. @defaultValue 64
   */
  readonly maxGroupAppends?: number;
  /** Run the schema migration when opening. @defaultValue true */
  readonly migrate?: boolean;
  /**
   * Open for reading (audit, export): no migration, no DDL — the schema must already be at this code's version,
   * else opening fails with `store-io` saying what is missing. A role without DDL rights can open this way.
   * @defaultValue false
   */
  readonly readOnly?: boolean;
  /**
   * Wake live subscriptions with LISTEN/NOTIFY on a dedicated connection. Turn off behind a pooler in
   * transaction mode (pgbouncer), where LISTEN does not work: subscriptions then rely on polling alone.
   * @defaultValue true
   */
  readonly listen?: boolean;
  /**
   * Each append issues a NOTIFY inside its transaction (delivered at commit) so that other processes'
   * subscriptions wake up at once. Turn off when no other process subscribes: it saves roughly a third of the
   * cost of a one-event append. @defaultValue true
   */
  readonly notify?: boolean;
  /** Connection settings for the LISTEN connection. @defaultValue `{ connectionString }`, or the pool's options */
  readonly listenConnection?: ClientConfig;
  /**
   * While subscriptions are open, they also re-query this often: the fallback when a notification is lost
   * (listener connection down, `listen: false`). @defaultValue 1000
   */
  readonly pollIntervalMs?: number;
  /** Errors of background work (the LISTEN connection, idle pool clients). @defaultValue ignored */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** The defaults of {@link PostgresEventStoreOptions}. */
export const POSTGRES_STORE_DEFAULTS = {
  schema: 'steerlog',
  poolSize: 10,
  readPageSize: 1000,
  maxStatementBytes: 16 * 1024 * 1024,
  pollIntervalMs: 1000,
  maxGroupAppends: 64,
} as const;

/** The `maxGroupAppends` option, checked: a TypeError unless it is an integer from 1 to 64. */
const groupLimit = (options: PostgresEventStoreOptions): number => {
  const limit = options.maxGroupAppends ?? POSTGRES_STORE_DEFAULTS.maxGroupAppends;
  if (!Number.isInteger(limit) || limit < 1 || limit > 64) throw new TypeError(`maxGroupAppends must be an integer from 1 to 64, got ${limit}`);
  return limit;
};

/** Opens (and by default migrates) a PostgreSQL event store. */
export async function openPostgresEventStore(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
  groupLimit(options);
  const schema = assertValidSchemaName(options.schema ?? POSTGRES_STORE_DEFAULTS.schema);
  let pool: Pool;
  let ownsPool: boolean;
  let listenConnection: ClientConfig | undefined = options.listenConnection;
  if (options.pool) {
    pool = options.pool;
    ownsPool = false;
    listenConnection ??= (pool as unknown as { options: ClientConfig }).options;
  } else if (options.connectionString) {
    pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? POSTGRES_STORE_DEFAULTS.poolSize });
    ownsPool = true;
    listenConnection ??= { connectionString: options.connectionString };
  } else {
    throw new TypeError('openPostgresEventStore: pass connectionString or pool');
  }
  // An idle pooled connection that fails (server restart) must not crash the process.
  if (ownsPool) pool.on('error', (e) => options.onBackgroundError?.(e));
  try {
    if (options.readOnly) await assertSchemaCurrent(pool, schema);
    else if (options.migrate ?? true) await migrate(pool, schema);
  } catch (e) {
    if (ownsPool) await pool.end().catch(() => undefined);
    const doing = options.readOnly ? `opening schema "${schema}" read-only` : `migrating schema "${schema}"`;
    throw new StoreError('store-io', `${doing} failed: ${(e as Error).message}`, { cause: e });
  }
  return new PostgresEventStore(pool, ownsPool, schema, listenConnection, options);
}

/**
 * The EventStore port on PostgreSQL. See docs/store-postgres.md for the schema, the concurrency check,
 * how the global order avoids gaps, and how subscriptions go live. The work is done by the modules beside this one
 * (append-events, event-reads, delete-stream, live-subscriptions), over one shared StoreContext.
 */
export class PostgresEventStore implements EventStore, StreamDeletion, SessionCatalogSource {
  /** The `db.system.name` telemetry gives this store's operations. */
  readonly dbSystem = 'postgresql';
  readonly schema: string;
  readonly #ownsPool: boolean;
  readonly #notifier = new ChangeNotifier();
  readonly #ctx: AppendContext & ReadContext;
  readonly #live: LiveSubscriptions;
  /** The group commit; null when `maxGroupAppends` is 1. */
  readonly #groups: AppendGroups | null;
  #closed = false;

  /** Use {@link openPostgresEventStore}: it migrates the schema first. */
  constructor(pool: Pool, ownsPool: boolean, schema: string, listenConnection: ClientConfig | undefined, options: PostgresEventStoreOptions) {
    this.#ownsPool = ownsPool;
    this.schema = schema;
    this.#ctx = {
      pool,
      sql: statements(schema),
      isClosed: () => this.#closed,
      pageSize: options.readPageSize ?? POSTGRES_STORE_DEFAULTS.readPageSize,
      maxEventBytes: options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
      maxStatementBytes: options.maxStatementBytes ?? POSTGRES_STORE_DEFAULTS.maxStatementBytes,
      notify: options.notify ?? true,
      notifier: this.#notifier,
    };
    const maxGroupAppends = groupLimit(options);
    this.#groups = maxGroupAppends > 1 ? new AppendGroups(this.#ctx, maxGroupAppends) : null;
    this.#live = new LiveSubscriptions(this.#ctx, this.#notifier, {
      listen: options.listen ?? true,
      listenConnection,
      pollIntervalMs: options.pollIntervalMs ?? POSTGRES_STORE_DEFAULTS.pollIntervalMs,
      onBackgroundError: options.onBackgroundError ?? (() => undefined),
    });
  }

  // ---------------------------------------------------------------- search

  /** `steerlog search` from the store's text index: the streaming scan's answer (see text-search.ts). */
  searchText(query: SearchQuery, keyring: Keyring): Promise<SearchResult> {
    return searchIndexed(this.#ctx, query, keyring);
  }

  // ---------------------------------------------------------------- session catalog

  /**
   * A page of the session catalog (`session_catalog`, kept by `append_events` in the append's transaction): one
   * indexed query, so a list costs the page, not the events. See docs/store-postgres.md.
   */
  listSessions(query: SessionCatalogQuery = {}): Promise<SessionCatalogPage> {
    return listCatalog(this.#ctx, query);
  }

  /** Folds the session catalog again from the events (appends wait meanwhile); the number of rows it then holds. */
  rebuildSessionCatalog(): Promise<number> {
    return rebuildCatalog(this.#ctx);
  }

  // ---------------------------------------------------------------- append

  /** The largest event this store accepts (the `maxEventBytes` option). */
  get maxEventBytes(): number {
    return this.#ctx.maxEventBytes;
  }

  /**
   * Appends a batch (see the port). With grouping on (`maxGroupAppends` > 1) the append joins the next group commit:
   * it is checked and encoded now, written with the appends queued beside it, and settled on its own.
   */
  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.#groups === null) return appendEvents(this.#ctx, stream, events, expected);
    try {
      return this.#groups.submit(prepareAppend(this.#ctx, stream, events, expected));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  // ---------------------------------------------------------------- reads

  async *read(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    for await (const page of this.readPages(stream, options)) yield* page;
  }

  /**
   * `read` a page at a time: keyset pages of at most `pageSize` rows (default: the store's `readPageSize` option), one
   * query each, every page starting after the last revision of the one before.
   */
  readPages(stream: string, options: ReadPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readStreamPages(this.#ctx, stream, options);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    for await (const page of this.readAllPages(options)) yield* page;
  }

  /**
   * `readAll` a page at a time: keyset pages of at most `pageSize` rows (default: the store's `readPageSize` option),
   * one query each, every page starting after the last position of the one before.
   */
  readAllPages(options: ReadAllPagesOptions = {}): AsyncIterable<readonly RecordedEvent[]> {
    return readAllPages(this.#ctx, options);
  }

  /**
   * Deletes a whole stream if its last revision is `expected` (StreamDeletion), through `delete_stream()`: one
   * transaction that records it in `archived_streams` (with `reason`) and deletes its events — the only DELETE the
   * append-only trigger lets through. See docs/store-postgres.md.
   */
  deleteStream(stream: string, expected: StreamRevision, options: DeleteStreamOptions = {}): Promise<void> {
    return deleteStoredStream(this.#ctx, stream, expected, options);
  }

  revision(stream: string): Promise<StreamRevision | 'no_stream'> {
    return revisionOf(this.#ctx, stream);
  }

  // ---------------------------------------------------------------- subscriptions

  subscribe(stream: string, options: SubscribeOptions = {}): AsyncIterable<SubscriptionMessage> {
    assertOpen(this.#ctx);
    assertValidStreamId(stream);
    return this.#live.follow(streamSource(this, stream, options.from), null, options.signal);
  }

  subscribeAll(options: SubscribeAllOptions = {}): AsyncIterable<SubscriptionMessage> {
    assertOpen(this.#ctx);
    return this.#live.follow(allSource(this, options.partition), options.after ?? null, options.signal);
  }

  // ---------------------------------------------------------------- lifecycle

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#notifier.close();
    await this.#live.close();
    // Appends called before close() are written (or refused) before the pool goes.
    await this.#groups?.idle();
    if (this.#ownsPool) await this.#ctx.pool.end();
  }
}
