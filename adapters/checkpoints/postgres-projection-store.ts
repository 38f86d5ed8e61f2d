import pg from 'pg';
import {
  ProjectionFencedError,
  ProjectionPartitionsMismatchError,
  liveViewNameOf,
  partitionOf,
  tableNameOf,
  type Isolate,
  type ParkedEvent,
  type ParkedRecord,
  type PartitionCommit,
  type PartitionCommitEntry,
  type PartitionsWrite,
  type PartitionKey,
  type PartitionSnapshot,
  type PartitionStatus,
  type ProjectionLease,
  type ProjectionStore,
} from '../../projections/index.js';

/** Options of {@link openPostgresProjectionStore}. */
export interface PostgresProjectionStoreOptions {
  /** A pool to use (not closed by `close()`), or a connection string for a pool the store owns. */
  readonly connection: pg.Pool | string;
  /** The schema of its tables and of the table projections' tables (created if missing). @defaultValue 'steerlog_projections' */
  readonly schema?: string;
  /** Connections of the pool it owns. @defaultValue 4 */
  readonly poolSize?: number;
  /**
   * A commit's transaction idle longer than this (its worker paused or hung between statements) is ended by the
   * server (`idle_in_transaction_session_timeout`), so its lock on the lease row cannot keep another worker from
   * taking the partition over. @defaultValue 30_000
   */
  readonly idleInTransactionMs?: number;
}

/** What a table projection's `handle` gets as its transaction on PostgreSQL: a client inside `BEGIN … COMMIT`. */
export type PostgresProjectionTx = pg.PoolClient;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const ident = (name: string): string => {
  if (!IDENT.test(name)) throw new TypeError(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
};

/**
 * Projection leases, checkpoints, keyed documents and parked events in PostgreSQL, in one schema:
 * `projection_leases (name, version, partition, partitions, owner, epoch, expires_at)` (the database clock decides
 * expiry, like the host's session leases), `projection_checkpoints (…, position, epoch, applied, committed_at)`,
 * `projection_documents (…, key, state json)`, `projection_parked (…, position, stream, revision, error)`,
 * `projection_workers (name, version, owner, expires_at)` and `projection_tables` (the tables each table projection
 * version declared). A commit is one transaction: it locks the partition's lease row, checks that the lease still
 * has the committing owner and epoch, runs the table projection's writes, upserts the changed documents and parked
 * events, and moves the checkpoint only forward; a refused commit rolls everything back (`ProjectionFencedError`).
 */
export class PostgresProjectionStore implements ProjectionStore<PostgresProjectionTx> {
  readonly supportsTables = true;
  /** The `db.system.name` of its operations (telemetry). */
  readonly dbSystem = 'postgresql';
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #schemaName: string;
  readonly #s: string;
  readonly #idleMs: number;
  #ready: Promise<void> | null = null;

  constructor(options: PostgresProjectionStoreOptions) {
    this.#ownsPool = typeof options.connection === 'string';
    this.#pool =
      typeof options.connection === 'string' ? new pg.Pool({ connectionString: options.connection, max: options.poolSize ?? 4 }) : options.connection;
    this.#schemaName = options.schema ?? 'steerlog_projections';
    this.#s = ident(this.#schemaName);
    this.#idleMs = Math.max(100, Math.floor(options.idleInTransactionMs ?? 30_000));
  }

  /** The schema of its tables. */
  get schema(): string {
    return this.#schemaName;
  }

  /** Creates the schema and tables if missing (every other method calls it first). */
  init(): Promise<void> {
    const s = this.#s;
    this.#ready ??= (async () => {
      const client = await this.#pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`steerlog.projections.${this.#schemaName}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_leases (
          name text NOT NULL, version integer NOT NULL, partition integer NOT NULL, partitions integer NOT NULL,
          owner text, epoch integer NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (name, version, partition))`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_checkpoints (
          name text NOT NULL, version integer NOT NULL, partition integer NOT NULL, position numeric(39, 0) NOT NULL,
          epoch integer NOT NULL, applied bigint NOT NULL DEFAULT 0, committed_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (name, version, partition))`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_documents (
          name text NOT NULL, version integer NOT NULL, partition integer NOT NULL, key text NOT NULL, state json NOT NULL,
          PRIMARY KEY (name, version, partition, key))`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_parked (
          name text NOT NULL, version integer NOT NULL, partition integer NOT NULL, position numeric(39, 0) NOT NULL,
          stream text NOT NULL, revision numeric(39, 0) NOT NULL, error text NOT NULL, parked_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (name, version, position))`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_workers (
          name text NOT NULL, version integer NOT NULL, owner text NOT NULL, expires_at timestamptz NOT NULL,
          PRIMARY KEY (name, version, owner))`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_tables (
          name text NOT NULL, version integer NOT NULL, table_name text NOT NULL, PRIMARY KEY (name, version, table_name))`);
        await client.query(`ALTER TABLE ${s}.projection_tables ADD COLUMN IF NOT EXISTS declared text`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.projection_live (
          name text PRIMARY KEY, version integer NOT NULL, swapped_at timestamptz NOT NULL DEFAULT now())`);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        this.#ready = null;
        throw e;
      } finally {
        client.release();
      }
    })();
    return this.#ready;
  }

  async acquire(key: PartitionKey, owner: string, leaseMs: number): Promise<ProjectionLease | null> {
    await this.init();
    const s = this.#s;
    // one round trip: the take happens only when no lease row of the version has another partition count (a worker
    // joining takes up to its share of partitions one statement each)
    const res = await this.#pool.query<{ mismatch: number | null; epoch: number | null }>(
      `WITH other AS (
         SELECT partitions FROM ${s}.projection_leases WHERE name = $1 AND version = $2 AND partitions <> $4 LIMIT 1
       ), taken AS (
         INSERT INTO ${s}.projection_leases AS l (name, version, partition, partitions, owner, epoch, expires_at)
         SELECT $1, $2, $3, $4, $5, 1, now() + $6 * interval '1 millisecond' WHERE NOT EXISTS (SELECT 1 FROM other)
         ON CONFLICT (name, version, partition) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
           epoch = CASE WHEN l.owner = EXCLUDED.owner THEN l.epoch ELSE l.epoch + 1 END
           WHERE l.owner = EXCLUDED.owner OR l.owner IS NULL OR l.expires_at < now()
         RETURNING epoch
       )
       SELECT (SELECT partitions FROM other) AS mismatch, (SELECT epoch FROM taken) AS epoch`,
      [key.name, key.version, key.partition, key.partitions, owner, leaseMs],
    );
    const row = res.rows[0]!;
    if (row.mismatch !== null) throw new ProjectionPartitionsMismatchError(key.name, key.version, row.mismatch, key.partitions);
    return row.epoch !== null ? { key, owner, epoch: row.epoch } : null;
  }

  async renew(lease: ProjectionLease, leaseMs: number): Promise<boolean> {
    await this.init();
    const { key } = lease;
    const res = await this.#pool.query(
      `UPDATE ${this.#s}.projection_leases SET expires_at = now() + $6 * interval '1 millisecond'
       WHERE name = $1 AND version = $2 AND partition = $3 AND owner = $4 AND epoch = $5`,
      [key.name, key.version, key.partition, lease.owner, lease.epoch, leaseMs],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async release(lease: ProjectionLease): Promise<void> {
    await this.init();
    const { key } = lease;
    await this.#pool.query(
      `UPDATE ${this.#s}.projection_leases SET owner = NULL, expires_at = now()
       WHERE name = $1 AND version = $2 AND partition = $3 AND owner = $4 AND epoch = $5`,
      [key.name, key.version, key.partition, lease.owner, lease.epoch],
    );
  }

  async load(lease: ProjectionLease): Promise<PartitionSnapshot> {
    await this.init();
    const { key } = lease;
    const args = [key.name, key.version, key.partition];
    const cp = await this.#pool.query<{ position: string }>(
      `SELECT position::text AS position FROM ${this.#s}.projection_checkpoints WHERE name = $1 AND version = $2 AND partition = $3`,
      args,
    );
    const docs = await this.#pool.query<{ key: string; state: string }>(
      `SELECT key, state::text AS state FROM ${this.#s}.projection_documents WHERE name = $1 AND version = $2 AND partition = $3`,
      args,
    );
    return {
      position: cp.rows[0] ? BigInt(cp.rows[0].position) : null,
      documents: new Map(docs.rows.map((r) => [r.key, r.state])),
    };
  }

  async commit(lease: ProjectionLease, commit: PartitionCommit<PostgresProjectionTx>): Promise<void> {
    await this.commitPartitions([{ lease, commit }], commit.write);
  }

  /**
   * One transaction for the partitions of `entries` (one projection version), whatever their number: `BEGIN`, the
   * lease rows locked in partition order and checked, `write`, the changed documents and parked events of every
   * partition in one statement each, every checkpoint moved forward in one statement, `COMMIT` — so a worker's batch
   * costs the same round trips over 8 partitions as over 1.
   */
  async commitPartitions(entries: readonly PartitionCommitEntry[], write?: PartitionsWrite<PostgresProjectionTx>): Promise<void> {
    await this.init();
    if (entries.length === 0) return;
    const s = this.#s;
    const { name, version, partitions } = entries[0]!.lease.key;
    const byPartition = new Map<number, PartitionCommitEntry>();
    for (const entry of entries) {
      const { key } = entry.lease;
      if (key.name !== name || key.version !== version || byPartition.has(key.partition)) {
        throw new TypeError(`one commit holds distinct partitions of one projection version (got ${key.name}@${key.version} partition ${key.partition} beside ${name}@${version})`);
      }
      byPartition.set(key.partition, entry);
    }
    const fenced = (entry: PartitionCommitEntry, reason: string): ProjectionFencedError =>
      new ProjectionFencedError(name, version, entry.lease.key.partition, entry.lease.epoch, reason);
    const client = await this.#pool.connect();
    let broken = false;
    try {
      await client.query(`BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${this.#idleMs}`); // one round trip
      // in partition order: two workers locking overlapping partitions (a stale one, a new one) cannot deadlock
      const held = await client.query<{ partition: number; owner: string | null; epoch: number }>(
        `SELECT partition, owner, epoch FROM ${s}.projection_leases WHERE name = $1 AND version = $2 AND partition = ANY($3::int[])
         ORDER BY partition FOR UPDATE`,
        [name, version, [...byPartition.keys()]],
      );
      const rows = new Map(held.rows.map((r) => [r.partition, r]));
      for (const entry of entries) {
        const row = rows.get(entry.lease.key.partition);
        if (!row || row.owner !== entry.lease.owner || row.epoch !== entry.lease.epoch) {
          throw fenced(entry, row ? `the lease is at epoch ${row.epoch}, held by ${row.owner ?? 'nobody'}` : 'no lease');
        }
      }
      const parked: { partition: number; event: ParkedEvent }[] = entries.flatMap((e) => e.commit.parked.map((event) => ({ partition: e.lease.key.partition, event })));
      /** Events parked inside `write`, by partition (they leave its applied count). */
      const parkedInWrite = new Map<number, number>();
      if (write) {
        let n = 0;
        const isolate: Isolate = async (work) => {
          const savepoint = `sp${n++}`;
          await client.query(`SAVEPOINT ${savepoint}`);
          try {
            await work();
            await client.query(`RELEASE SAVEPOINT ${savepoint}`);
            return null;
          } catch (e) {
            await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
            return e ?? new Error('failed');
          }
        };
        for (const event of (await write(client, isolate)) ?? []) {
          const partition = entries.length === 1 ? entries[0]!.lease.key.partition : partitionOf(event.stream, partitions);
          if (!byPartition.has(partition)) throw new TypeError(`an event parked in the commit's write (stream ${event.stream}) is not of a committed partition`);
          parked.push({ partition, event });
          parkedInWrite.set(partition, (parkedInWrite.get(partition) ?? 0) + 1);
        }
      }
      const upserts: [number, string, string][] = [];
      const deletes: [number, string][] = [];
      for (const entry of entries) {
        for (const [k, v] of entry.commit.documents) {
          if (v === null) deletes.push([entry.lease.key.partition, k]);
          else upserts.push([entry.lease.key.partition, k, v]);
        }
      }
      if (upserts.length > 0) {
        await client.query(
          `INSERT INTO ${s}.projection_documents (name, version, partition, key, state)
           SELECT $1, $2, d.partition, d.key, d.state::json FROM unnest($3::int[], $4::text[], $5::text[]) AS d(partition, key, state)
           ON CONFLICT (name, version, partition, key) DO UPDATE SET state = EXCLUDED.state`,
          [name, version, upserts.map(([p]) => p), upserts.map(([, k]) => k), upserts.map(([, , v]) => v)],
        );
      }
      if (deletes.length > 0) {
        await client.query(
          `DELETE FROM ${s}.projection_documents d USING unnest($3::int[], $4::text[]) AS x(partition, key)
           WHERE d.name = $1 AND d.version = $2 AND d.partition = x.partition AND d.key = x.key`,
          [name, version, deletes.map(([p]) => p), deletes.map(([, k]) => k)],
        );
      }
      if (parked.length > 0) {
        await client.query(
          `INSERT INTO ${s}.projection_parked (name, version, partition, position, stream, revision, error)
           SELECT $1, $2, p.partition, p.position::numeric, p.stream, p.revision::numeric, p.error
           FROM unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS p(partition, position, stream, revision, error)
           ON CONFLICT (name, version, position) DO UPDATE SET error = EXCLUDED.error, parked_at = now()`,
          [
            name,
            version,
            parked.map((p) => p.partition),
            parked.map((p) => p.event.position.toString()),
            parked.map((p) => p.event.stream),
            parked.map((p) => p.event.revision.toString()),
            parked.map((p) => p.event.error),
          ],
        );
      }
      const unparked = entries.flatMap((e) => e.commit.unparked ?? []);
      if (unparked.length > 0) {
        await client.query(`DELETE FROM ${s}.projection_parked WHERE name = $1 AND version = $2 AND position = ANY($3::numeric[])`, [name, version, unparked.map(String)]);
      }
      const moved = await client.query<{ partition: number }>(
        `INSERT INTO ${s}.projection_checkpoints AS c (name, version, partition, position, epoch, applied)
         SELECT $1, $2, u.partition, u.position::numeric, u.epoch, u.applied
         FROM unnest($3::int[], $4::text[], $5::int[], $6::bigint[]) AS u(partition, position, epoch, applied)
         ON CONFLICT (name, version, partition) DO UPDATE SET position = EXCLUDED.position, epoch = EXCLUDED.epoch,
           applied = c.applied + EXCLUDED.applied, committed_at = now()
           WHERE c.position <= EXCLUDED.position AND c.epoch <= EXCLUDED.epoch
         RETURNING c.partition`,
        [
          name,
          version,
          entries.map((e) => e.lease.key.partition),
          entries.map((e) => e.commit.position.toString()),
          entries.map((e) => e.lease.epoch),
          entries.map((e) => (e.commit.applied - (parkedInWrite.get(e.lease.key.partition) ?? 0)).toString()),
        ],
      );
      const landed = new Set(moved.rows.map((r) => r.partition));
      const refused = entries.find((e) => !landed.has(e.lease.key.partition));
      if (refused) throw fenced(refused, `it would move the checkpoint back to ${refused.commit.position} (or a later epoch committed)`);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw e;
    } finally {
      client.release(broken);
    }
  }

  async migrate(name: string, version: number, tables: Readonly<Record<string, string>>): Promise<Readonly<Record<string, string>>> {
    await this.init();
    const names: Record<string, string> = {};
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`steerlog.projection-tables.${this.#schemaName}.${name}@${version}`]);
      for (const [table, columns] of Object.entries(tables)) {
        const plain = tableNameOf(name, version, table);
        names[table] = `${this.#s}.${ident(plain)}`;
        await client.query(`CREATE TABLE IF NOT EXISTS ${names[table]} (${columns})`);
        await client.query(
          `INSERT INTO ${this.#s}.projection_tables (name, version, table_name, declared) VALUES ($1, $2, $3, $4)
           ON CONFLICT (name, version, table_name) DO UPDATE SET declared = EXCLUDED.declared`,
          [name, version, plain, table],
        );
      }
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
    return Object.freeze(names);
  }

  async heartbeat(name: string, version: number, owner: string, leaseMs: number): Promise<readonly string[]> {
    await this.init();
    await this.#pool.query(
      `INSERT INTO ${this.#s}.projection_workers (name, version, owner, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
       ON CONFLICT (name, version, owner) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
      [name, version, owner, leaseMs],
    );
    const res = await this.#pool.query<{ owner: string }>(
      `SELECT owner FROM ${this.#s}.projection_workers WHERE name = $1 AND version = $2 AND expires_at >= now() ORDER BY owner COLLATE "C"`,
      [name, version],
    );
    return res.rows.map((r) => r.owner);
  }

  async leave(name: string, version: number, owner: string): Promise<void> {
    await this.init();
    await this.#pool.query(`DELETE FROM ${this.#s}.projection_workers WHERE name = $1 AND version = $2 AND owner = $3`, [name, version, owner]);
  }

  async status(name?: string): Promise<readonly PartitionStatus[]> {
    await this.init();
    const s = this.#s;
    const res = await this.#pool.query<{
      name: string;
      version: number;
      partition: number;
      partitions: number;
      owner: string | null;
      epoch: number;
      expires_at: Date;
      live: boolean;
      position: string | null;
      committed_at: Date | null;
      applied: string | null;
      parked: string;
    }>(
      `SELECT l.name, l.version, l.partition, l.partitions, l.owner, l.epoch, l.expires_at, (l.owner IS NOT NULL AND l.expires_at >= now()) AS live,
              c.position::text AS position, c.committed_at, c.applied::text AS applied,
              (SELECT count(*) FROM ${s}.projection_parked p WHERE p.name = l.name AND p.version = l.version AND p.partition = l.partition)::text AS parked
       FROM ${s}.projection_leases l
       LEFT JOIN ${s}.projection_checkpoints c ON c.name = l.name AND c.version = l.version AND c.partition = l.partition
       WHERE $1::text IS NULL OR l.name = $1
       ORDER BY l.name, l.version, l.partition`,
      [name ?? null],
    );
    return res.rows.map((r) => ({
      key: { name: r.name, version: r.version, partition: r.partition, partitions: r.partitions },
      owner: r.live ? r.owner : null,
      epoch: r.epoch,
      leaseExpiresAt: r.live ? r.expires_at : null,
      position: r.position === null ? null : BigInt(r.position),
      committedAt: r.committed_at,
      applied: BigInt(r.applied ?? '0'),
      parked: Number(r.parked),
    }));
  }

  async parked(name: string, version: number): Promise<readonly ParkedRecord[]> {
    await this.init();
    const res = await this.#pool.query<{ partition: number; position: string; stream: string; revision: string; error: string; parked_at: Date }>(
      `SELECT partition, position::text AS position, stream, revision::text AS revision, error, parked_at
       FROM ${this.#s}.projection_parked WHERE name = $1 AND version = $2 ORDER BY position`,
      [name, version],
    );
    return res.rows.map((r) => ({
      partition: r.partition,
      position: BigInt(r.position),
      stream: r.stream,
      revision: BigInt(r.revision),
      error: r.error,
      parkedAt: r.parked_at,
    }));
  }

  async drop(name: string, version: number): Promise<void> {
    await this.init();
    const s = this.#s;
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      const tables = await client.query<{ table_name: string }>(`SELECT table_name FROM ${s}.projection_tables WHERE name = $1 AND version = $2`, [name, version]);
      // CASCADE: the live views of the live version go with its tables
      for (const t of tables.rows) await client.query(`DROP TABLE IF EXISTS ${s}.${ident(t.table_name)} CASCADE`);
      await client.query(`DELETE FROM ${s}.projection_live WHERE name = $1 AND version = $2`, [name, version]);
      for (const table of ['projection_tables', 'projection_documents', 'projection_parked', 'projection_checkpoints', 'projection_leases', 'projection_workers']) {
        await client.query(`DELETE FROM ${s}.${table} WHERE name = $1 AND version = $2`, [name, version]);
      }
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  async liveVersion(name: string): Promise<number | null> {
    await this.init();
    const res = await this.#pool.query<{ version: number }>(`SELECT version FROM ${this.#s}.projection_live WHERE name = $1`, [name]);
    return res.rows[0]?.version ?? null;
  }

  async swap(name: string, version: number): Promise<void> {
    await this.init();
    const s = this.#s;
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`steerlog.projection-live.${this.#schemaName}.${name}`]);
      const previous = await client.query<{ declared: string | null }>(
        `SELECT t.declared FROM ${s}.projection_live l JOIN ${s}.projection_tables t ON t.name = l.name AND t.version = l.version WHERE l.name = $1`,
        [name],
      );
      for (const r of previous.rows) if (r.declared !== null) await client.query(`DROP VIEW IF EXISTS ${s}.${ident(liveViewNameOf(name, r.declared))}`);
      const tables = await client.query<{ table_name: string; declared: string | null }>(
        `SELECT table_name, declared FROM ${s}.projection_tables WHERE name = $1 AND version = $2 ORDER BY declared`,
        [name, version],
      );
      for (const t of tables.rows) {
        if (t.declared === null) continue;
        const view = `${s}.${ident(liveViewNameOf(name, t.declared))}`;
        await client.query(`DROP VIEW IF EXISTS ${view}`);
        await client.query(`CREATE VIEW ${view} AS SELECT * FROM ${s}.${ident(t.table_name)}`);
      }
      await client.query(
        `INSERT INTO ${s}.projection_live (name, version) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, swapped_at = now()`,
        [name, version],
      );
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }
}
