import { channelName, type Migration } from './schema-names.js';

/**
 * Migration 3: stream deletion for retention (StreamDeletion), through one deliberate path.
 *
 * - `archived_streams` records every deleted stream: its last revision, event count, reason, when and by which role.
 * - `delete_stream(stream, expected, reason)` checks the expected revision under the stream's row lock, records the
 *   stream in `archived_streams`, names it in the transaction-local setting `steerlog.deleting_stream`, deletes its
 *   events and clears the setting, all in one transaction.
 * - The append-only trigger lets a DELETE through only for a row of the stream named by that setting AND recorded in
 *   `archived_streams`; a plain `DELETE`, any `UPDATE` and `TRUNCATE` are still refused (SLC02).
 * - `append_events` refuses a deleted stream (SLC03), checked after it holds the stream's row, so an append racing a
 *   deletion cannot recreate it.
 * The table's owner can still take the path by hand (or disable the trigger, as before): the hash chain and the
 * `archived_streams` record are what show it.
 */
export const ARCHIVE_MIGRATION: Migration = {
  version: 3,
  name: 'stream deletion for retention: archived_streams, delete_stream(), the append-only trigger lets only it delete',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
CREATE TABLE ${s}.archived_streams (
  stream      text        PRIMARY KEY,
  revision    bigint      NOT NULL,
  events      bigint      NOT NULL,
  reason      text,
  archived_at timestamptz NOT NULL DEFAULT now(),
  archived_by text        NOT NULL DEFAULT current_user
);

CREATE OR REPLACE FUNCTION ${s}.refuse_event_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF current_setting('steerlog.deleting_stream', true) = OLD.stream
       AND EXISTS (SELECT 1 FROM ${s}.archived_streams a WHERE a.stream = OLD.stream) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'SLC02', MESSAGE = format('steerlog: the events table is append-only (%s refused)', TG_OP);
END
$fn$;

CREATE FUNCTION ${s}.delete_stream(p_stream text, p_expected bigint, p_reason text) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_actual bigint;
  v_events bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM ${s}.archived_streams a WHERE a.stream = p_stream) THEN
    RAISE EXCEPTION USING ERRCODE = 'SLC03', MESSAGE = 'steerlog: the stream was deleted (archived)';
  END IF;
  SELECT st.revision INTO v_actual FROM ${s}.streams st WHERE st.stream = p_stream FOR UPDATE;
  v_actual := coalesce(v_actual, -1);
  IF v_actual <> p_expected THEN
    RAISE EXCEPTION USING ERRCODE = 'SLC01', MESSAGE = 'steerlog: wrong expected revision', DETAIL = v_actual::text;
  END IF;
  INSERT INTO ${s}.archived_streams (stream, revision, events, reason) VALUES (p_stream, v_actual, v_actual + 1, p_reason);
  PERFORM set_config('steerlog.deleting_stream', p_stream, true);
  DELETE FROM ${s}.events e WHERE e.stream = p_stream;
  GET DIAGNOSTICS v_events = ROW_COUNT;
  PERFORM set_config('steerlog.deleting_stream', '', true);
  DELETE FROM ${s}.streams st WHERE st.stream = p_stream;
  RETURN v_events;
END
$fn$;

CREATE OR REPLACE FUNCTION ${s}.append_events(
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

  -- after the stream's row is held (or created): a deletion that committed meanwhile is seen here
  IF EXISTS (SELECT 1 FROM ${s}.archived_streams a WHERE a.stream = p_stream) THEN
    RAISE EXCEPTION USING ERRCODE = 'SLC03', MESSAGE = 'steerlog: the stream was deleted (archived)';
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
};
