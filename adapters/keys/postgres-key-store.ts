import pg from 'pg';
import { KeyStoreError, type DataKeyLookup, type DestroyedKey, type KeySelector, type KeyStore, type NewDataKey } from '../../runtime/ports/key-store.js';

/** Options of {@link PostgresKeyStore}. */
export interface PostgresKeyStoreOptions {
  /** A pool to use (not closed by `close()`), or a connection string for a pool the store owns. */
  readonly connection: pg.Pool | string;
  /** Schema of the table. @defaultValue 'public' */
  readonly schema?: string;
  /** Table name. @defaultValue 'steerlog_data_keys' */
  readonly table?: string;
  /** Create nothing; refuse `put` and `destroy`; a missing table holds no keys. @defaultValue false */
  readonly readOnly?: boolean;
  /**
   * After `destroy`, run `VACUUM FULL` on the key table: the table is rewritten into new files without the dead row
   * versions that still held the destroyed keys' bytes (see docs/audit.md). @defaultValue true
   */
  readonly vacuum?: boolean;
  /**
   * Before that `VACUUM FULL`, wait at most this long for every transaction that could still see the destroyed
   * keys' old row versions (a snapshot older than the destroy) to end: VACUUM must keep a row version such a
   * snapshot may read, so on a busy database a VACUUM run at once can leave the key bytes in the table's pages.
   * The wait reads `pg_stat_activity.backend_xmin`, which PostgreSQL shows for other roles' sessions only to a role
   * with `pg_read_all_stats`; past the bound the VACUUM runs anyway. @defaultValue 10000
   */
  readonly vacuumWaitMs?: number;
}

/** How often {@link PostgresKeyStore} looks again for snapshots older than a destroy. */
const SNAPSHOT_POLL_MS = 50;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const ident = (name: string): string => {
  if (!IDENT.test(name)) throw new TypeError(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
};

interface Row {
  key_id: string;
  session: string;
  actor: string | null;
  key: Buffer | null;
  destroyed_at: string | null;
}

/**
 * Data keys in a PostgreSQL table `(key_id text primary key, session text, actor text, created_at bigint,
 * key bytea, destroyed_at bigint)`. Destroying a key sets `key` to NULL and stamps `destroyed_at` (the row stays as
 * a tombstone), then — PostgreSQL keeps the old row version until VACUUM — runs `VACUUM FULL` on the table.
 */
export class PostgresKeyStore implements KeyStore {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #schema: string;
  readonly #table: string;
  readonly #opts: PostgresKeyStoreOptions;
  #ready: Promise<void> | null = null;

  constructor(options: PostgresKeyStoreOptions) {
    this.#opts = options;
    this.#ownsPool = typeof options.connection === 'string';
    this.#pool = typeof options.connection === 'string' ? new pg.Pool({ connectionString: options.connection, max: 2 }) : options.connection;
    this.#schema = ident(options.schema ?? 'public');
    this.#table = `${this.#schema}.${ident(options.table ?? 'steerlog_data_keys')}`;
  }

  /** The table's qualified name. */
  get table(): string {
    return this.#table;
  }

  /** Creates the schema and table if missing (every writing method calls it first). */
  init(): Promise<void> {
    this.#ready ??= this.#pool
      .query(
        `CREATE SCHEMA IF NOT EXISTS ${this.#schema};
         CREATE TABLE IF NOT EXISTS ${this.#table} (
           key_id text PRIMARY KEY,
           session text NOT NULL,
           actor text,
           created_at bigint NOT NULL,
           key bytea,
           destroyed_at bigint,
           CHECK ((key IS NULL) = (destroyed_at IS NOT NULL))
         );
         CREATE INDEX IF NOT EXISTS ${ident(`${(this.#opts.table ?? 'steerlog_data_keys').slice(0, 50)}_session`)} ON ${this.#table} (session);`,
      )
      .then(
        () => undefined,
        (e: unknown) => {
          this.#ready = null;
          throw e;
        },
      );
    return this.#ready;
  }

  async put(key: NewDataKey): Promise<void> {
    this.#writable();
    await this.init();
    const result = await this.#pool.query(
      `INSERT INTO ${this.#table} (key_id, session, actor, created_at, key) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key_id) DO NOTHING`,
      [key.keyId, key.session, key.actor ?? null, key.createdAt, Buffer.from(key.key)],
    );
    if (result.rowCount === 0) throw new KeyStoreError('key-exists', this.#table, `key ${key.keyId} exists`);
  }

  async get(keyIds: readonly string[]): Promise<ReadonlyMap<string, DataKeyLookup>> {
    const out = new Map<string, DataKeyLookup>();
    for (const k of await this.#select('key_id = ANY($1::text[])', [keyIds])) out.set(k.keyId, k);
    return out;
  }

  async keysOf(selector: KeySelector): Promise<readonly DataKeyLookup[]> {
    return 'session' in selector ? this.#select('session = $1', [selector.session]) : this.#select('actor = $1', [selector.actor]);
  }

  async #select(where: string, params: unknown[]): Promise<DataKeyLookup[]> {
    if (!this.#opts.readOnly) await this.init();
    let rows: Row[];
    try {
      ({ rows } = await this.#pool.query<Row>(
        `SELECT key_id, session, actor, key, destroyed_at::text AS destroyed_at FROM ${this.#table} WHERE ${where} ORDER BY created_at, key_id`,
        params,
      ));
    } catch (e) {
      // read-only over a database that never had encryption on: no table, no keys
      if (this.#opts.readOnly && (e as { code?: unknown }).code === '42P01') return [];
      throw e;
    }
    return rows.map((r) => {
      const who = { keyId: r.key_id, session: r.session, ...(r.actor !== null ? { actor: r.actor } : {}) };
      return r.key !== null ? { state: 'active', ...who, key: new Uint8Array(r.key) } : { state: 'destroyed', ...who, destroyedAt: Number(r.destroyed_at) };
    });
  }

  async destroy(selector: KeySelector, at: number): Promise<readonly DestroyedKey[]> {
    this.#writable();
    await this.init();
    const column = 'session' in selector ? 'session' : 'actor';
    const subject = 'session' in selector ? selector.session : selector.actor;
    const { rows } = await this.#pool.query<Row & { xid: string }>(
      `UPDATE ${this.#table} SET key = NULL, destroyed_at = $2 WHERE ${column} = $1 AND key IS NOT NULL RETURNING key_id, session, actor, pg_current_xact_id()::text AS xid`,
      [subject, at],
    );
    // the old row versions (with the key bytes) stay in the table's pages until VACUUM; FULL rewrites the table, but
    // keeps a version that a snapshot older than the destroy may still read: wait for those snapshots first
    if (rows.length > 0 && (this.#opts.vacuum ?? true)) {
      await this.#olderSnapshotsEnded(rows[0]!.xid, this.#opts.vacuumWaitMs ?? 10_000);
      await this.#pool.query(`VACUUM FULL ${this.#table}`);
    }
    return rows.map((r) => ({ keyId: r.key_id, session: r.session, ...(r.actor !== null ? { actor: r.actor } : {}) }));
  }

  /**
   * Waits (at most `waitMs`) until no other session of this database holds a snapshot from before transaction `xid`
   * committed (VACUUM of an ordinary table heeds only its own database's snapshots).
   */
  async #olderSnapshotsEnded(xid: string, waitMs: number): Promise<void> {
    const until = Date.now() + waitMs;
    for (;;) {
      const { rows } = await this.#pool.query<{ older: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_xmin IS NOT NULL
           AND age(backend_xmin) >= age($1::xid8::xid)) AS older`,
        [xid],
      );
      if (!rows[0]!.older || Date.now() >= until) return;
      await new Promise((resolve) => setTimeout(resolve, SNAPSHOT_POLL_MS));
    }
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }

  #writable(): void {
    if (this.#opts.readOnly) throw new KeyStoreError('key-store-read-only', this.#table, 'opened read-only');
  }
}
