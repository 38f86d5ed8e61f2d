import type { Pool, PoolClient } from 'pg';
import { ARCHIVE_MIGRATION } from './migration-archive.js';
import { TEXT_SEARCH_MIGRATION } from './migration-text-search.js';
import { PARTITION_HASH_MIGRATION } from './migration-partition-hash.js';
import { SESSION_CATALOG_MIGRATION } from './migration-session-catalog.js';
import { GROUP_APPEND_MIGRATION } from './migration-group-append.js';
import { SET_GROUP_APPEND_MIGRATION } from './migration-set-group-append.js';
import { assertValidSchemaName, channelName, type Migration } from './schema-names.js';

export { assertValidSchemaName, channelName, type Migration } from './schema-names.js';

/**
 * Versioned schema migrations for the PostgreSQL event store.
 *
 * Every migration is a function of the schema name (tables are always schema-qualified), applied in order
 * inside ONE transaction that first takes a transaction-scoped advisory lock keyed by the schema name: two
 * processes that start at once serialize on the lock, the second one then sees the first one's rows in
 * `<schema>.migrations` and applies nothing. `CREATE SCHEMA IF NOT EXISTS` alone is not safe under concurrency
 * (both sessions can pass the check and one then fails on the catalog's unique index), hence the lock.
 */

/** First key of the two-int advisory lock that guards migrations ("stlg" in ASCII); the second is hashtext(schema). */
export const MIGRATION_LOCK_CLASS = 0x73746c67;

const q = (schema: string): string => `"${schema}"`;

/** The PostgreSQL store's migrations, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'events, streams, global position counter, append function',
    sql: (schema) => {
      const s = q(schema);
      return `
CREATE TABLE ${s}.streams (
  stream   text   PRIMARY KEY,
  revision bigint NOT NULL CHECK (revision >= 0)
);

CREATE TABLE ${s}.events (
  position  bigint           PRIMARY KEY,
  stream    text             NOT NULL,
  revision  bigint           NOT NULL,
  id        text             NOT NULL,
  type      text             NOT NULL,
  time      double precision NOT NULL,
  data      json             NOT NULL,
  ignorable boolean          NOT NULL DEFAULT false,
  CONSTRAINT events_stream_revision_key UNIQUE (stream, revision),
  CONSTRAINT events_stream_id_key UNIQUE (stream, id)
);

-- One row: the last global position handed out. Updating it inside the append transaction holds its row lock
-- until commit, so appends are serialized in commit order and positions become visible in order (no gap).
CREATE TABLE ${s}.global_position (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  last      bigint  NOT NULL
);
INSERT INTO ${s}.global_position (singleton, last) VALUES (true, -1);

-- One call = one transaction (in autocommit) = one round trip. Returns the stream's revision after the append and
-- the global position of its last event (for an empty batch: the current ones, -1 when absent). Refusals are
-- errors, so that nothing of the call remains: SQLSTATE SLC01 = wrong expected revision (DETAIL: the actual
-- revision, -1 for no stream); 23505 on events_stream_id_key = an id of the batch is already in the stream (the
-- caller then decides between an idempotent retry and a duplicate).
CREATE FUNCTION ${s}.append_events(
  p_stream    text,
  p_expected  text,
  p_ids       text[],
  p_types     text[],
  p_times     double precision[],
  p_data      text[],
  p_ignorable boolean[],
  p_notify    boolean,
  OUT new_revision  bigint,
  OUT last_position bigint
)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n      integer := coalesce(cardinality(p_ids), 0);
  v_actual bigint;
BEGIN
  IF v_n = 0 THEN
    SELECT st.revision INTO v_actual FROM ${s}.streams st WHERE st.stream = p_stream;
    v_actual := coalesce(v_actual, -1);
  ELSE
    LOOP
      -- Lock the stream's head row (writers of one stream queue here) and move it in the same statement.
      UPDATE ${s}.streams st SET revision = st.revision + v_n WHERE st.stream = p_stream
        RETURNING st.revision - v_n INTO v_actual;
      EXIT WHEN FOUND;
      v_actual := -1;
      EXIT WHEN p_expected NOT IN ('any', 'no_stream');
      INSERT INTO ${s}.streams (stream, revision) VALUES (p_stream, v_n - 1) ON CONFLICT (stream) DO NOTHING;
      -- Not inserted: a racing writer created the stream and committed meanwhile; update it instead.
      EXIT WHEN FOUND;
    END LOOP;
  END IF;

  IF NOT (p_expected = 'any'
          OR (p_expected = 'no_stream' AND v_actual = -1)
          OR (p_expected = 'stream_exists' AND v_actual >= 0)
          OR (p_expected ~ '^[0-9]{1,19}$' AND v_actual = p_expected::bigint)) THEN
    RAISE EXCEPTION USING ERRCODE = 'SLC01', MESSAGE = 'steerlog: wrong expected revision', DETAIL = v_actual::text;
  END IF;

  new_revision := v_actual + v_n;
  IF v_n = 0 THEN
    SELECT e.position INTO last_position FROM ${s}.events e WHERE e.stream = p_stream AND e.revision = v_actual;
    last_position := coalesce(last_position, -1);
    RETURN;
  END IF;

  UPDATE ${s}.global_position g SET last = g.last + v_n RETURNING g.last INTO last_position;

  INSERT INTO ${s}.events (position, stream, revision, id, type, time, data, ignorable)
  SELECT last_position - v_n + u.ord, p_stream, v_actual + u.ord, u.id, u.type, u.time, u.data::json, coalesce(u.ign, false)
  FROM unnest(p_ids, p_types, p_times, p_data, p_ignorable) WITH ORDINALITY AS u(id, type, time, data, ign, ord);

  -- Delivered at commit, only if the append commits; listeners then see the events (no wake-up lost in a crash).
  IF p_notify THEN
    PERFORM pg_notify('${channelName(schema)}', '');
  END IF;
END
$fn$;
`;
    },
  },
  {
    version: 2,
    name: 'metadata and chain hash columns, server-side recorded_at, append-only events table',
    sql: (schema) => {
      const s = q(schema);
      return `
-- Provenance and the writer's chain hash, kept verbatim (NULL in rows written before they existed).
ALTER TABLE ${s}.events
  ADD COLUMN metadata    json,
  ADD COLUMN hash        text CHECK (hash ~ '^[0-9a-f]{64}$'),
  ADD COLUMN recorded_at timestamptz;
-- Rows written before this migration keep recorded_at NULL: their commit time is unknown.

-- recorded_at is the database's commit-transaction time, whatever the writer sends.
CREATE FUNCTION ${s}.stamp_recorded_at() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.recorded_at := now();
  RETURN NEW;
END
$fn$;
CREATE TRIGGER events_recorded_at BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.stamp_recorded_at();

-- The events table is append-only: UPDATE, DELETE and TRUNCATE are refused (SQLSTATE SLC02), whoever asks.
CREATE FUNCTION ${s}.refuse_event_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'SLC02', MESSAGE = format('steerlog: the events table is append-only (%s refused)', TG_OP);
END
$fn$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.refuse_event_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON ${s}.events FOR EACH STATEMENT EXECUTE FUNCTION ${s}.refuse_event_change();

-- append_events gains the metadata and hash of each event.
DROP FUNCTION ${s}.append_events(text, text, text[], text[], double precision[], text[], boolean[], boolean);
CREATE FUNCTION ${s}.append_events(
  p_stream    text,
  p_expected  text,
  p_ids       text[],
  p_types     text[],
  p_times     double precision[],
  p_data      text[],
  p_ignorable boolean[],
  p_metadata  text[],
  p_hashes    text[],
  p_notify    boolean,
  OUT new_revision  bigint,
  OUT last_position bigint
)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n      integer := coalesce(cardinality(p_ids), 0);
  v_actual bigint;
BEGIN
  IF v_n = 0 THEN
    SELECT st.revision INTO v_actual FROM ${s}.streams st WHERE st.stream = p_stream;
    v_actual := coalesce(v_actual, -1);
  ELSE
    LOOP
      UPDATE ${s}.streams st SET revision = st.revision + v_n WHERE st.stream = p_stream
        RETURNING st.revision - v_n INTO v_actual;
      EXIT WHEN FOUND;
      v_actual := -1;
      EXIT WHEN p_expected NOT IN ('any', 'no_stream');
      INSERT INTO ${s}.streams (stream, revision) VALUES (p_stream, v_n - 1) ON CONFLICT (stream) DO NOTHING;
      EXIT WHEN FOUND;
    END LOOP;
  END IF;

  IF NOT (p_expected = 'any'
          OR (p_expected = 'no_stream' AND v_actual = -1)
          OR (p_expected = 'stream_exists' AND v_actual >= 0)
          OR (p_expected ~ '^[0-9]{1,19}$' AND v_actual = p_expected::bigint)) THEN
    RAISE EXCEPTION USING ERRCODE = 'SLC01', MESSAGE = 'steerlog: wrong expected revision', DETAIL = v_actual::text;
  END IF;

  new_revision := v_actual + v_n;
  IF v_n = 0 THEN
    SELECT e.position INTO last_position FROM ${s}.events e WHERE e.stream = p_stream AND e.revision = v_actual;
    last_position := coalesce(last_position, -1);
    RETURN;
  END IF;

  UPDATE ${s}.global_position g SET last = g.last + v_n RETURNING g.last INTO last_position;

  INSERT INTO ${s}.events (position, stream, revision, id, type, time, data, ignorable, metadata, hash)
  SELECT last_position - v_n + u.ord, p_stream, v_actual + u.ord, u.id, u.type, u.time, u.data::json, coalesce(u.ign, false), u.meta::json, u.hash
  FROM unnest(p_ids, p_types, p_times, p_data, p_ignorable, p_metadata, p_hashes) WITH ORDINALITY AS u(id, type, time, data, ign, meta, hash, ord);

  IF p_notify THEN
    PERFORM pg_notify('${channelName(schema)}', '');
  END IF;
END
$fn$;
`;
    },
  },
  ARCHIVE_MIGRATION,
  TEXT_SEARCH_MIGRATION,
  PARTITION_HASH_MIGRATION,
  SESSION_CATALOG_MIGRATION,
  GROUP_APPEND_MIGRATION,
  SET_GROUP_APPEND_MIGRATION,
];

/** The schema version the latest migration creates. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** What a migration run did: the versions it applied and the schema version after it. */
export interface MigrationReport {
  /** Versions this call applied (empty when the schema was already current). */
  readonly applied: readonly number[];
  readonly version: number;
}

/**
 * Brings `schema` to the latest version. Idempotent; safe when several processes call it at once.
 * Refuses a schema whose recorded version is newer than this code knows (a newer steerlog migrated it).
 */
export async function migrate(pool: Pool, schema: string): Promise<MigrationReport> {
  assertValidSchemaName(schema);
  const client: PoolClient = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${q(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${q(schema)}.migrations (
           version    integer     PRIMARY KEY,
           name       text        NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const done = await client.query<{ version: number }>(`SELECT version FROM ${q(schema)}.migrations`);
      const have = new Set(done.rows.map((r) => Number(r.version)));
      const newest = Math.max(-1, ...have);
      if (newest > LATEST_SCHEMA_VERSION) {
        throw new Error(`schema "${schema}" is at version ${newest}; this steerlog knows up to ${LATEST_SCHEMA_VERSION}`);
      }
      const applied: number[] = [];
      for (const m of MIGRATIONS) {
        if (have.has(m.version)) continue;
        await client.query(m.sql(schema));
        await client.query(`INSERT INTO ${q(schema)}.migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
        applied.push(m.version);
      }
      await client.query('COMMIT');
      return { applied, version: LATEST_SCHEMA_VERSION };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  } finally {
    client.release();
  }
}

/**
 * For a read-only open (a role without DDL rights): checks, without writing, that `schema` holds steerlog's
 * tables at exactly the version this code knows. Throws an Error saying what is missing or older/newer.
 */
export async function assertSchemaCurrent(pool: Pool, schema: string): Promise<void> {
  assertValidSchemaName(schema);
  const table = await pool.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${q(schema)}.migrations`]);
  if (table.rows[0]?.t === null || table.rows[0]?.t === undefined) {
    throw new Error(`schema "${schema}" holds no steerlog store (no ${schema}.migrations table); a writable open creates it`);
  }
  const done = await pool.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${q(schema)}.migrations`);
  const version = Number(done.rows[0]?.v ?? -1);
  if (version < LATEST_SCHEMA_VERSION) {
    throw new Error(`schema "${schema}" is at version ${version}; this steerlog needs version ${LATEST_SCHEMA_VERSION} (a writable open migrates it)`);
  }
  if (version > LATEST_SCHEMA_VERSION) {
    throw new Error(`schema "${schema}" is at version ${version}; this steerlog knows up to ${LATEST_SCHEMA_VERSION}`);
  }
}
