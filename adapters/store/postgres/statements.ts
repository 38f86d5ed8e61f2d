/**
 * The SQL the PostgreSQL store runs, the settings it runs it with, and the SQLSTATEs its functions answer with.
 * The functions and tables themselves are created by the migrations (migrations.ts).
 */
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { streamRevision, type ExpectedRevision } from '../../../runtime/ports/event-store.js';
import type { ActualRevision } from '../../../runtime/ports/store-errors.js';
import { channelName } from './migrations.js';

/** Where a statement can run: the pool (autocommit) or a client inside a transaction. */
export type Queryable = Pick<Pool | PoolClient, 'query'>;

/** Rows come back as PostgreSQL's text output, whatever type parsers the caller's `pg` has installed. */
export const RAW_TYPES = { getTypeParser: () => (value: string) => value } as unknown as NonNullable<QueryConfig['types']>;

/** SQLSTATE of `append_events` and `delete_stream` when the stream is not at the expected revision; `detail` holds the actual one. */
export const WRONG_EXPECTED_REVISION = 'SLC01';
/** SQLSTATE of `append_events` and `delete_stream` when the stream was deleted. */
export const STREAM_DELETED = 'SLC03';

/** A stream's actual revision as the store's functions report it (a WRONG_EXPECTED_REVISION `detail`): -1 is no stream. */
export const actualRevision = (text: string): ActualRevision => {
  const actual = BigInt(text);
  return actual < 0n ? 'no_stream' : streamRevision(actual);
};
/**
 * An expected revision as `append_events_group` takes it (migration 8): the revision itself, or -1 for no stream,
 * -2 for any, -3 for a stream that exists.
 */
export const expectedCode = (expected: ExpectedRevision): string =>
  expected === 'no_stream' ? '-1' : expected === 'any' ? '-2' : expected === 'stream_exists' ? '-3' : String(expected);

/** SQLSTATE of a unique constraint violation. */
export const UNIQUE_VIOLATION = '23505';

/**
 * An index row whose text the server can match: neither sealed nor pending, and holding every word ($5, the LIKE
 * patterns). `text IS NOT NULL` is spelled out so the partial trigram index applies to a generic plan too.
 */
const TEXT_MATCH = 'NOT (t.sealed OR t.pending) AND t.text IS NOT NULL AND t.text LIKE ALL ($5::text[])';
/** The filters of a text search: the types, the time bounds and the session (each bound NULL when there is none). */
const SEARCH_FILTERS = 'e.type = ANY ($1::text[]) AND ($2::float8 IS NULL OR e.time >= $2::float8) AND ($3::float8 IS NULL OR e.time < $3::float8) AND ($4::text IS NULL OR e.stream = $4::text)';

/** The statements of one schema (see {@link statements}). */
export type Statements = ReturnType<typeof statements>;

/**
 * The statements of the store in `schema` (a name migrations.ts has validated). Each prepared statement has a name
 * of its own per schema (`…Name`), so that stores on different schemas can share a pool.
 */
export const statements = (schema: string) => {
  const s = `"${schema}"`;
  const columns = 'position, stream, revision, id, type, time, data, ignorable, metadata, hash';
  return {
    appendName: `stl_append_${schema}`,
    append: `SELECT new_revision AS revision, last_position AS position FROM ${s}.append_events_indexed($1, $2, $3::text[], $4::text[], $5::float8[], $6::text[], $7::boolean[], $8::text[], $9::text[], $10::boolean, $11::text[], $12::boolean[])`,
    appendGroupName: `stl_append_group_${schema}`,
    /** Several appends in one statement (one transaction): one row per append, in order (migration 8; see {@link expectedCode}). */
    appendGroup: `SELECT outcome, new_revision AS revision, last_position AS position, detail FROM ${s}.append_events_group($1::text[], $2::int8[], $3::int4[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::boolean[], $9::text[], $10::text[], $11::boolean, $12::text[], $13::boolean[], $14::int8[])`,
    knownName: `stl_known_${schema}`,
    known: `SELECT id, revision, position FROM ${s}.events WHERE stream = $1 AND id = ANY ($2::text[])`,
    revisionName: `stl_revision_${schema}`,
    revision: `SELECT revision FROM ${s}.streams WHERE stream = $1`,
    readForwardsName: `stl_read_fwd_${schema}`,
    readForwards: `SELECT ${columns} FROM ${s}.events WHERE stream = $1 AND revision >= $2::bigint ORDER BY revision ASC LIMIT $3`,
    readBackwardsName: `stl_read_bwd_${schema}`,
    readBackwards: `SELECT ${columns} FROM ${s}.events WHERE stream = $1 AND revision <= $2::bigint ORDER BY revision DESC LIMIT $3`,
    readAllName: `stl_read_all_${schema}`,
    readAll: `SELECT ${columns} FROM ${s}.events WHERE position > $1::bigint ORDER BY position ASC LIMIT $2`,
    /** The text search (text-search.ts): $1 types, $2 since, $3 until, $4 session (NULL: no bound). */
    searchScanned: `SELECT count(*) AS n FROM ${s}.events e WHERE ${SEARCH_FILTERS}`,
    /**
     * Then $5 the LIKE patterns: the events whose indexed text holds every word, counted per session with the
     * session's first such position (one pass over the trigram match; no row leaves the server).
     */
    searchTextCounts: `SELECT e.stream, count(*) AS n, min(e.position) AS first
      FROM ${s}.event_text t JOIN ${s}.events e ON e.position = t.position
      WHERE ${SEARCH_FILTERS} AND ${TEXT_MATCH}
      GROUP BY e.stream`,
    /** Then $5 the LIKE patterns, $6 how many: the first of those events in the store's global order. */
    searchTextFirst: `SELECT e.position, e.stream, e.revision, e.type, e.time, e.metadata
      FROM ${s}.event_text t JOIN ${s}.events e ON e.position = t.position
      WHERE ${SEARCH_FILTERS} AND ${TEXT_MATCH}
      ORDER BY t.position ASC LIMIT $6`,
    /**
     * Then $5 the last position read, $6 the page size: the events the reader must open (sealed, or not indexed), with
     * their data. The index rows are read first and each one's event looked up by position (`OFFSET 0` keeps the
     * lookup a nested loop), so a store without such rows costs one pass over `event_text`, not a join of the events.
     */
    searchToOpen: `SELECT e.position, e.stream, e.revision, e.type, e.time, e.metadata, e.data
      FROM ${s}.event_text t CROSS JOIN LATERAL (SELECT * FROM ${s}.events e WHERE e.position = t.position AND ${SEARCH_FILTERS} OFFSET 0) e
      WHERE (t.sealed OR t.pending) AND t.position > $5::bigint
      ORDER BY t.position ASC LIMIT $6`,
    searchData: `SELECT position, data FROM ${s}.events WHERE position = ANY ($1::bigint[])`,
    readAllPartitionsName: `stl_read_all_parts_${schema}`,
    /**
     * `readAll` of the streams whose `stream_hash % $3` is one of the partitions kept, written as "none of the
     * partitions left out, `$4`": the planner estimates `<> ALL` to keep most rows, so it walks the position index in
     * order and stops at the page's end. (Written as `= ANY (kept)`, it estimated a few percent of the rows and chose a
     * bitmap scan of every row after the cursor, then a sort: each page cost the rest of the log, 283 ms instead of 1 ms
     * for a page of 1,000 at position 100,000 of 210,000.)
     */
    readAllPartitions: `SELECT ${columns} FROM ${s}.events WHERE position > $1::bigint AND stream_hash % $3::bigint <> ALL ($4::bigint[]) ORDER BY position ASC LIMIT $2`,
    /** The session catalog's table (migration 6): listed a page at a time by session-catalog.ts. */
    sessionCatalog: `${s}.session_catalog`,
    /** Not prepared: the repair path's rebuild of the session catalog. */
    rebuildCatalog: `SELECT ${s}.rebuild_session_catalog() AS n`,
    /** Not prepared: deletions are rare. */
    deleteStream: `SELECT ${s}.delete_stream($1, $2::bigint, $3)`,
    /** Run on the dedicated listener connection. */
    listen: `LISTEN "${channelName(schema)}"`,
  };
};
