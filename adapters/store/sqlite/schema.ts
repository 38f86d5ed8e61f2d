/**
 * The SQLite store's schema (one database file) and how a connection is set up: WAL journal, `synchronous` by the
 * store's durability, a busy timeout for writers of other connections, and the schema created or checked.
 */
import { StoreError } from '../../../runtime/ports/store-errors.js';
import type { SqliteDatabase } from './driver.js';

/**
 * The schema version this code reads and writes (`PRAGMA user_version`). Version 2 keeps one `fold_snapshots` row
 * per snapshot (version 1 kept a JSON array per session, rewritten whole by every append): a writable open migrates a
 * version 1 file (one transaction), a read-only one refuses it (`store-io`, naming `store repair`).
 */
export const SQLITE_SCHEMA_VERSION = 2;

/** The fold snapshots' table (schema version 2): one row per snapshot. */
const FOLD_SNAPSHOTS_TABLE = `CREATE TABLE fold_snapshots (
  stream   TEXT    NOT NULL,
  seq      INTEGER NOT NULL,
  snapshot TEXT    NOT NULL,
  PRIMARY KEY (stream, seq)
) WITHOUT ROWID;`;

/**
 * The catalog row of every stream named by `where`, folded from its events: `created_at`, `kind` and `parent` from
 * revision 0 when it is a `session/created` whose data says so (else the first event's time, no kind), the last
 * event's revision, time and hash, and whether the last `turn/start`/`turn/end` is a `turn/start`. The same fold as
 * the append's upsert (append-events.ts); used when a row is missing and by the rebuild.
 */
export const catalogFill = (where: string): string => `
INSERT OR REPLACE INTO session_catalog (stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head)
SELECT st.stream,
       CASE WHEN f.type = 'session/created' AND json_type(f.data, '$.createdAt') IN ('integer', 'real')
            THEN json_extract(f.data, '$.createdAt') ELSE f.time END,
       CASE WHEN f.type = 'session/created' AND json_type(f.data, '$.kind') = 'text' THEN json_extract(f.data, '$.kind') END,
       CASE WHEN f.type = 'session/created' AND json_type(f.data, '$.parentSession') = 'text' THEN json_extract(f.data, '$.parentSession') END,
       l.revision, l.time,
       coalesce((SELECT e.type = 'turn/start' FROM events e WHERE e.stream = st.stream AND e.type IN ('turn/start', 'turn/end')
                 ORDER BY e.revision DESC LIMIT 1), 0),
       l.hash
FROM streams st
JOIN events f ON f.stream = st.stream AND f.revision = 0
JOIN events l ON l.stream = st.stream AND l.revision = st.revision
${where}`;

const SCHEMA = `
CREATE TABLE streams (
  stream   TEXT    PRIMARY KEY,
  revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE events (
  stream      TEXT    NOT NULL,
  revision    INTEGER NOT NULL,
  position    INTEGER NOT NULL,
  id          TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  time        REAL    NOT NULL,
  data        TEXT    NOT NULL,
  ignorable   INTEGER NOT NULL,
  metadata    TEXT,
  hash        TEXT,
  stream_hash INTEGER NOT NULL,
  PRIMARY KEY (stream, revision)
) WITHOUT ROWID;
CREATE UNIQUE INDEX events_position ON events (position);
CREATE UNIQUE INDEX events_stream_id ON events (stream, id);
CREATE TABLE global_position (
  one  INTEGER PRIMARY KEY CHECK (one = 0),
  last INTEGER NOT NULL
);
INSERT INTO global_position VALUES (0, -1);
CREATE TABLE archived_streams (
  stream      TEXT    PRIMARY KEY,
  revision    INTEGER NOT NULL,
  reason      TEXT,
  archived_at REAL    NOT NULL
) WITHOUT ROWID;
CREATE TABLE session_catalog (
  stream        TEXT    PRIMARY KEY,
  created_at    REAL    NOT NULL,
  kind          TEXT,
  parent        TEXT,
  last_seq      INTEGER NOT NULL,
  last_activity REAL    NOT NULL,
  open_turn     INTEGER NOT NULL,
  chain_head    TEXT
) WITHOUT ROWID;
CREATE INDEX session_catalog_order ON session_catalog (created_at, stream);
${FOLD_SNAPSHOTS_TABLE}
PRAGMA user_version = ${SQLITE_SCHEMA_VERSION};
`;

/**
 * Version 1 to 2: each session's JSON array of snapshots becomes one row per snapshot (a row that is not an array,
 * or an element without an integer seq, is dropped: the snapshots are a cache of a fold of the log).
 */
const MIGRATE_1_TO_2 = `
ALTER TABLE fold_snapshots RENAME TO fold_snapshots_v1;
${FOLD_SNAPSHOTS_TABLE}
INSERT OR IGNORE INTO fold_snapshots (stream, seq, snapshot)
  SELECT f.stream, json_extract(j.value, '$.seq'), j.value
  FROM fold_snapshots_v1 f, json_each(CASE WHEN json_valid(f.snapshots) AND json_type(f.snapshots) = 'array' THEN f.snapshots ELSE '[]' END) j
  WHERE json_type(j.value, '$.seq') = 'integer';
DROP TABLE fold_snapshots_v1;
PRAGMA user_version = 2;
`;

/** How a connection is set up. */
export interface ConnectionSetup {
  /** Read only: no pragma that writes, no schema created; the schema must be at {@link SQLITE_SCHEMA_VERSION}. */
  readonly readOnly: boolean;
  /** `FULL` (every commit fsynced) or `NORMAL` (WAL: the last commits may be lost on power loss, never corrupted). */
  readonly synchronous: 'full' | 'normal';
}

/**
 * Sets the connection up and creates the schema in a new file (one transaction), migrates a version 1 file when
 * writable (one transaction), or checks the version of an existing one.
 * @throws StoreError `store-io` when the file holds another schema version (or none, read-only; version 1 read-only)
 */
export const setUpConnection = (db: SqliteDatabase, file: string, setup: ConnectionSetup): void => {
  if (!setup.readOnly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${setup.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  const version = (): number => Number(db.pragma('user_version', { simple: true }));
  if (version() === 0 && !setup.readOnly) {
    db.transaction(() => {
      if (version() === 0) db.exec(SCHEMA);
    }).immediate();
  }
  if (version() === 1 && !setup.readOnly) {
    db.transaction(() => {
      if (version() === 1) db.exec(MIGRATE_1_TO_2);
    }).immediate();
  }
  const found = version();
  if (found === 1 && setup.readOnly) {
    throw new StoreError('store-io', `${file}: SQLite store schema version 1, this steerlog reads version ${SQLITE_SCHEMA_VERSION}: open it writable once, or run \`steerlog store repair sqlite:${file}\`, to migrate it`);
  }
  if (found !== SQLITE_SCHEMA_VERSION) {
    throw new StoreError('store-io', `${file}: SQLite store schema version ${found}, this steerlog reads version ${SQLITE_SCHEMA_VERSION}${found === 0 ? ' (no steerlog store in this file)' : ''}`);
  }
};
