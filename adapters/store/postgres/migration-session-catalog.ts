import { channelName, type Migration } from './schema-names.js';

/**
 * The fill of the session catalog from the events (one row per stream): used by migration 6 for the events already
 * there and by `rebuild_session_catalog()`. The same fold as the append function's upsert (see
 * {@link SESSION_CATALOG_MIGRATION}): `created_at`, `kind` and `parent` from the stream's revision 0 when it is a
 * `session/created` whose data says so (else the first event's time, no kind), the last event's revision, time and
 * hash, and whether the last `turn/start` or `turn/end` is a `turn/start`.
 */
const catalogFill = (s: string, where = ''): string => `
INSERT INTO ${s}.session_catalog (stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head)
SELECT st.stream,
       CASE WHEN f.type = 'session/created' AND json_typeof(f.data) = 'object' AND json_typeof(f.data -> 'createdAt') = 'number'
            THEN (f.data ->> 'createdAt')::double precision ELSE f.time END,
       CASE WHEN f.type = 'session/created' AND json_typeof(f.data) = 'object' AND json_typeof(f.data -> 'kind') = 'string'
            THEN f.data ->> 'kind' END,
       CASE WHEN f.type = 'session/created' AND json_typeof(f.data) = 'object' AND json_typeof(f.data -> 'parentSession') = 'string'
            THEN f.data ->> 'parentSession' END,
       l.revision, l.time, coalesce(t.type = 'turn/start', false), l.hash
FROM ${s}.streams st
JOIN ${s}.events f ON f.stream = st.stream AND f.revision = 0
JOIN ${s}.events l ON l.stream = st.stream AND l.revision = st.revision
LEFT JOIN LATERAL (
  SELECT e.type FROM ${s}.events e
  WHERE e.stream = st.stream AND e.type IN ('turn/start', 'turn/end')
  ORDER BY e.revision DESC LIMIT 1
) t ON true${where};
`;

/**
 * Migration 6: the session catalog, one row per stream, maintained by `append_events` in the append's own
 * transaction, so that `sessions`, `session.list` and the console's list read a page of it instead of the events.
 *
 * - `session_catalog`: stream, `created_at` (`session/created`'s `createdAt` at revision 0, else the first event's
 *   time), `kind` and `parent` (`session/created`'s `kind` and `parentSession`; no kind: not a session), `last_seq`,
 *   `last_activity` (the last event's time), `open_turn` (the last `turn/start` has no `turn/end` after it),
 *   `chain_head` (the last event's `hash`). Ordered by (`created_at`, stream in byte order) for paging.
 * - `append_events` upserts the stream's row after inserting the batch (one statement per call: the batch's first
 *   event when it is revision 0, its last, and the last `turn/start`/`turn/end` it holds).
 * - A deleted stream's row goes with its `streams` row (an `AFTER DELETE` trigger on `streams`).
 * - `rebuild_session_catalog()` folds the table again from the events, appends held off meanwhile (a SHARE lock on
 *   `streams`, which every append updates): the store's repair path. The migration fills it the same way.
 */
export const SESSION_CATALOG_MIGRATION: Migration = {
  version: 6,
  name: 'session catalog: session_catalog maintained by append_events, rebuild_session_catalog()',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
CREATE TABLE ${s}.session_catalog (
  stream        text             PRIMARY KEY,
  created_at    double precision NOT NULL,
  kind          text,
  parent        text,
  last_seq      bigint           NOT NULL,
  last_activity double precision NOT NULL,
  open_turn     boolean          NOT NULL,
  chain_head    text
);
CREATE INDEX session_catalog_order ON ${s}.session_catalog (created_at, stream COLLATE "C");
CREATE INDEX session_catalog_parent ON ${s}.session_catalog (parent) WHERE parent IS NOT NULL;

${catalogFill(s)}

CREATE FUNCTION ${s}.drop_session_catalog_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.session_catalog c WHERE c.stream = OLD.stream;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER streams_catalog_deleted AFTER DELETE ON ${s}.streams FOR EACH ROW EXECUTE FUNCTION ${s}.drop_session_catalog_row();

CREATE FUNCTION ${s}.rebuild_session_catalog() RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  v_rows bigint;
BEGIN
  LOCK TABLE ${s}.streams IN SHARE MODE;
  DELETE FROM ${s}.session_catalog;
  ${catalogFill(s)}
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  RETURN v_rows;
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
  v_n       integer := coalesce(cardinality(p_ids), 0);
  v_actual  bigint;
  v_hash    bigint;
  v_first   json;
  v_turn    text;
  v_created double precision;
  v_kind    text;
  v_parent  text;
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

  -- the session catalog's row, in this transaction: the last turn/start or turn/end of the batch says whether a
  -- turn is open after it (none: unchanged); revision 0 says what the session is
  SELECT u.type INTO v_turn FROM unnest(p_types) WITH ORDINALITY AS u(type, ord)
  WHERE u.type IN ('turn/start', 'turn/end') ORDER BY u.ord DESC LIMIT 1;
  IF v_actual = -1 THEN
    v_created := p_times[1];
    IF p_types[1] = 'session/created' THEN
      v_first := p_data[1]::json;
      IF json_typeof(v_first) = 'object' THEN
        IF json_typeof(v_first -> 'createdAt') = 'number' THEN v_created := (v_first ->> 'createdAt')::double precision; END IF;
        IF json_typeof(v_first -> 'kind') = 'string' THEN v_kind := v_first ->> 'kind'; END IF;
        IF json_typeof(v_first -> 'parentSession') = 'string' THEN v_parent := v_first ->> 'parentSession'; END IF;
      END IF;
    END IF;
    INSERT INTO ${s}.session_catalog AS c (stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head)
    VALUES (p_stream, v_created, v_kind, v_parent, new_revision, p_times[v_n], coalesce(v_turn = 'turn/start', false), p_hashes[v_n])
    ON CONFLICT (stream) DO UPDATE SET created_at = EXCLUDED.created_at, kind = EXCLUDED.kind, parent = EXCLUDED.parent,
      last_seq = EXCLUDED.last_seq, last_activity = EXCLUDED.last_activity, open_turn = EXCLUDED.open_turn, chain_head = EXCLUDED.chain_head;
  ELSE
    UPDATE ${s}.session_catalog c
    SET last_seq = new_revision, last_activity = p_times[v_n], chain_head = p_hashes[v_n],
        open_turn = CASE WHEN v_turn IS NULL THEN c.open_turn ELSE v_turn = 'turn/start' END
    WHERE c.stream = p_stream;
    IF NOT FOUND THEN
      -- a row that is missing (removed by hand) is folded again from the stream's events
      ${catalogFill(s, ' WHERE st.stream = p_stream')}
    END IF;
  END IF;

  IF p_notify THEN
    PERFORM pg_notify('${channelName(schema)}', '');
  END IF;
END
$fn$;
`;
  },
};
