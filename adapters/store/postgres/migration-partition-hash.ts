import { channelName, type Migration } from './schema-names.js';

/**
 * Migration 5: the stream hash of every event, so that a projection worker reads only the events of its partitions.
 *
 * - `stream_hash(text)`: FNV-1a (32-bit, unsigned) of the id's UTF-8 bytes — the function projection workers assign
 *   streams to partitions with (`partitionOf` in runtime/ports/stream-partition.ts; a test checks they agree).
 * - `events.stream_hash`: the hash of the row's stream, filled for the rows already there (as a stored generated
 *   column, which rewrites the table once without firing the append-only trigger, then made a plain column) and
 *   written by `append_events`, which computes it once per call.
 * - A partitioned read (`readAll` with `partition`) keeps the rows whose `stream_hash % count` is one of the kept
 *   partitions: the server skips the others, which are never sent or decoded.
 */
export const PARTITION_HASH_MIGRATION: Migration = {
  version: 5,
  name: 'stream_hash(text) and events.stream_hash: partitioned global reads for projection workers',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
CREATE FUNCTION ${s}.stream_hash(p_stream text) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
  v_bytes bytea := convert_to(p_stream, 'UTF8');
  v_h     bigint := 2166136261;
BEGIN
  FOR i IN 0 .. length(v_bytes) - 1 LOOP
    v_h := ((v_h # get_byte(v_bytes, i)) * 16777619) & 4294967295;
  END LOOP;
  RETURN v_h;
END
$fn$;

ALTER TABLE ${s}.events ADD COLUMN stream_hash bigint GENERATED ALWAYS AS (${s}.stream_hash(stream)) STORED;
ALTER TABLE ${s}.events ALTER COLUMN stream_hash DROP EXPRESSION;
ALTER TABLE ${s}.events ALTER COLUMN stream_hash SET NOT NULL;

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
  v_hash   bigint;
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

  -- once per call, before the global position's row lock is taken
  v_hash := ${s}.stream_hash(p_stream);

  UPDATE ${s}.global_position g SET last = g.last + v_n RETURNING g.last INTO last_position;

  INSERT INTO ${s}.events (position, stream, revision, id, type, time, data, ignorable, metadata, hash, stream_hash)
  SELECT last_position - v_n + u.ord, p_stream, v_actual + u.ord, u.id, u.type, u.time, u.data::json, coalesce(u.ign, false), u.meta::json, u.hash, v_hash
  FROM unnest(p_ids, p_types, p_times, p_data, p_ignorable, p_metadata, p_hashes) WITH ORDINALITY AS u(id, type, time, data, ign, meta, hash, ord);

  IF p_notify THEN
    PERFORM pg_notify('${channelName(schema)}', '');
  END IF;
END
$fn$;
`;
  },
};
