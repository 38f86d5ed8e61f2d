import pg from 'pg';
import type { Checkpoint, CheckpointStore, ProjectionKey } from '../../projections/checkpoints/checkpoint-store.js';

/** Options of {@link PostgresCheckpointStore}. */
export interface PostgresCheckpointStoreOptions {
  /** A pool to use (not closed by `close()`), or a connection string for a pool the store owns. */
  readonly connection: pg.Pool | string;
  /** Schema of the table (created if missing). @defaultValue 'public' */
  readonly schema?: string;
  /** Table name (created if missing). @defaultValue 'steerlog_checkpoints' */
  readonly table?: string;
}

/** Decimal digits of the position column: 2^128 − 1 has 39, so any packed (commit, prepare) pair of uint64 fits. */
const POSITION_DIGITS = 39;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const ident = (name: string): string => {
  if (!IDENT.test(name)) throw new TypeError(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
};

/**
 * Checkpoints in a PostgreSQL table `(name text, version int, position numeric(39, 0), state json, updated_at)`,
 * primary key `(name, version)`. `save` is one UPSERT statement, so position and state change together. The state
 * column is `json` (not `jsonb`): the JSON text is kept byte for byte.
 */
export class PostgresCheckpointStore implements CheckpointStore {
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #table: string;
  readonly #schema: string;
  #ready: Promise<void> | null = null;

  constructor(options: PostgresCheckpointStoreOptions) {
    this.#ownsPool = typeof options.connection === 'string';
    this.#pool = typeof options.connection === 'string' ? new pg.Pool({ connectionString: options.connection, max: 2 }) : options.connection;
    this.#schema = ident(options.schema ?? 'public');
    this.#table = `${this.#schema}.${ident(options.table ?? 'steerlog_checkpoints')}`;
  }

  /** Creates the schema and table if missing (every other method calls it first). */
  init(): Promise<void> {
    this.#ready ??= this.#pool
      .query(
        `CREATE SCHEMA IF NOT EXISTS ${this.#schema};
         CREATE TABLE IF NOT EXISTS ${this.#table} (
           name text NOT NULL,
           version integer NOT NULL,
           position numeric(39, 0) NOT NULL,
           state json NOT NULL,
           updated_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (name, version)
         )`,
      )
      .then(() => this.#widenPosition())
      .then(
        () => undefined,
        (e: unknown) => {
          this.#ready = null; // let the next call try again
          throw e;
        },
      );
    return this.#ready;
  }

  /**
   * Migration 1 → 2: tables created before version 2 hold `position numeric(20, 0)`, which cannot keep a packed
   * EventStoreDB `$all` position (commit · 2^64 + prepare, about 2^104 for a commit position of 2^40). Widen it to
   * `numeric(39, 0)`, which holds any pair of uint64; existing values are kept as they are. Runs once per table.
   */
  async #widenPosition(): Promise<void> {
    const schema = this.#schema.slice(1, -1);
    const table = this.#table.slice(this.#schema.length + 2, -1);
    const { rows } = await this.#pool.query<{ precision: number | null }>(
      `SELECT numeric_precision AS precision FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = 'position'`,
      [schema, table],
    );
    const precision = rows[0]?.precision;
    if (precision !== null && precision !== undefined && precision < POSITION_DIGITS) {
      await this.#pool.query(`ALTER TABLE ${this.#table} ALTER COLUMN position TYPE numeric(${POSITION_DIGITS}, 0)`);
    }
  }

  async load(key: ProjectionKey): Promise<Checkpoint | null> {
    await this.init();
    const result = await this.#pool.query<{ position: string; state: string }>(
      `SELECT position::text AS position, state::text AS state FROM ${this.#table} WHERE name = $1 AND version = $2`,
      [key.name, key.version],
    );
    const row = result.rows[0];
    return row ? { position: BigInt(row.position), state: row.state } : null;
  }

  async save(key: ProjectionKey, checkpoint: Checkpoint): Promise<void> {
    await this.init();
    await this.#pool.query(
      `INSERT INTO ${this.#table} (name, version, position, state) VALUES ($1, $2, $3::numeric, $4::json)
       ON CONFLICT (name, version) DO UPDATE SET position = EXCLUDED.position, state = EXCLUDED.state, updated_at = now()`,
      [key.name, key.version, checkpoint.position.toString(), checkpoint.state],
    );
  }

  async delete(key: ProjectionKey): Promise<void> {
    await this.init();
    await this.#pool.query(`DELETE FROM ${this.#table} WHERE name = $1 AND version = $2`, [key.name, key.version]);
  }

  async close(): Promise<void> {
    if (this.#ownsPool) await this.#pool.end();
  }
}
