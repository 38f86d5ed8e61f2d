import { channelName, type Migration } from './schema-names.js';

/**
 * Migration 8: the group commit's server side made cheap per append, with the same outcomes.
 *
 * - `append_events_group(streams, expected, counts, <the event columns of all the appends, concatenated>, notify,
 *   texts, sealed)` replaces migration 7's: `expected` is a bigint per append (the revision, or -1 no stream, -2 any,
 *   -3 the stream exists). It locks the global counter once, reads it once and writes it once (migration 7 locked and
 *   updated it in every append's subtransaction: a row locked and updated by 64 subtransactions of one transaction
 *   carries a MultiXact whose members every later visit of the row looks up). Each append's check runs before it
 *   writes anything, so a refusal needs no subtransaction: the stream's row moves only when the expected revision
 *   matches (one UPDATE); a missing row is created only when the stream was neither deleted nor expected to exist.
 *   A wrong expected revision answers SLC01 with the actual revision in `detail`, a deleted stream SLC03, in that
 *   append's row; nothing of it is written. The events of the accepted appends are then inserted in one statement,
 *   their text index rows in another, the session catalog kept per append as `append_events` keeps it, one NOTIFY.
 *   An id already stored fails the whole call (23505, `events_stream_id_key`): the store then writes each append
 *   alone, where the duplicate is answered as before. The lock order is migration 7's: the counter, then stream rows.
 * - The events' chain-hash CHECK says the same without a regular expression (a 64-character bounded repetition is
 *   the costliest part of an event's insert): 64 characters, each of `0-9a-f`. NOT VALID: the rows already stored
 *   were checked by the old constraint, which has the same meaning; every new row is checked.
 * - The two row triggers of an insert fire only when they have work: `events_recorded_at` when `recorded_at` is not
 *   the transaction's time already (the group function writes it), `events_text_pending` when the text index is not
 *   being written in the same transaction (`steerlog.text_indexing`); their functions are unchanged.
 */
export const SET_GROUP_APPEND_MIGRATION: Migration = {
  version: 8,
  name: 'append_events_group(): one counter update per group, checks before writes (no subtransactions), one insert; cheaper hash check and triggers',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
ALTER TABLE ${s}.events DROP CONSTRAINT events_hash_check;
ALTER TABLE ${s}.events ADD CONSTRAINT events_hash_check
  CHECK (length(hash) = 64 AND ltrim(hash, '0123456789abcdef') = '') NOT VALID;

DROP TRIGGER events_recorded_at ON ${s}.events;
CREATE TRIGGER events_recorded_at BEFORE INSERT ON ${s}.events FOR EACH ROW
  WHEN (NEW.recorded_at IS DISTINCT FROM now()) EXECUTE FUNCTION ${s}.stamp_recorded_at();
DROP TRIGGER events_text_pending ON ${s}.events;
CREATE TRIGGER events_text_pending AFTER INSERT ON ${s}.events FOR EACH ROW
  WHEN (coalesce(current_setting('steerlog.text_indexing', true), '') <> 'on') EXECUTE FUNCTION ${s}.mark_text_pending();

DROP FUNCTION ${s}.append_events_group(text[], text[], integer[], text[], text[], double precision[], text[], boolean[], text[], text[], boolean, text[], boolean[]);
CREATE FUNCTION ${s}.append_events_group(
  p_streams   text[],
  p_expected  bigint[],
  p_counts    integer[],
  p_ids       text[],
  p_types     text[],
  p_times     double precision[],
  p_data      text[],
  p_ignorable boolean[],
  p_metadata  text[],
  p_hashes    text[],
  p_notify    boolean,
  p_texts     text[],
  p_sealed    boolean[],
  p_hashed    bigint[]
)
RETURNS TABLE (outcome text, new_revision bigint, last_position bigint, detail text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
  v_appends  integer := coalesce(cardinality(p_streams), 0);
  v_last     bigint;
  v_start    bigint;
  v_from     integer := 1;
  v_n        integer;
  v_expected bigint;
  v_actual   bigint;
  v_stream   text;
  -- per append: the position and revision before its first event (NULL: refused), its first event's index
  v_pos      bigint[];
  v_rev      bigint[];
  v_first    integer[];
  v_app      integer[];
  v_turns    text[];
  v_data     json;
  v_created  double precision;
  v_kind     text;
  v_parent   text;
  v_to       integer;
BEGIN
  -- the counter before any stream row: one lock order for every append (migration 7)
  SELECT g.last INTO v_last FROM ${s}.global_position g FOR UPDATE;
  v_start := v_last;
  v_pos := array_fill(NULL::bigint, ARRAY[v_appends]);
  v_rev := array_fill(NULL::bigint, ARRAY[v_appends]);
  v_first := array_fill(NULL::integer, ARRAY[v_appends]);
  FOR i IN 1 .. v_appends LOOP
    v_n := p_counts[i];
    v_stream := p_streams[i];
    v_expected := p_expected[i];
    IF v_n < 1 THEN
      RAISE EXCEPTION 'steerlog: append_events_group takes appends of at least one event (append %)', i;
    END IF;
    v_first[i] := v_from;
    v_from := v_from + v_n;
    LOOP
      -- the stream's head row, locked and moved only when the expected revision matches
      UPDATE ${s}.streams st SET revision = st.revision + v_n
      WHERE st.stream = v_stream AND (v_expected IN (-2, -3) OR st.revision = v_expected)
      RETURNING st.revision - v_n INTO v_actual;
      EXIT WHEN FOUND;
      SELECT st.revision INTO v_actual FROM ${s}.streams st WHERE st.stream = v_stream;
      IF FOUND THEN
        -- a wrong expected revision (or no_stream for a stream that exists)
        outcome := 'SLC01'; new_revision := NULL; last_position := NULL; detail := v_actual::text;
        EXIT;
      END IF;
      -- no row: a deletion that committed meanwhile is seen here (the UPDATE waited for its row lock)
      IF EXISTS (SELECT 1 FROM ${s}.archived_streams a WHERE a.stream = v_stream) THEN
        outcome := 'SLC03'; new_revision := NULL; last_position := NULL; detail := NULL;
        EXIT;
      END IF;
      IF v_expected NOT IN (-1, -2) THEN
        outcome := 'SLC01'; new_revision := NULL; last_position := NULL; detail := '-1';
        EXIT;
      END IF;
      v_actual := -1;
      INSERT INTO ${s}.streams (stream, revision) VALUES (v_stream, v_n - 1) ON CONFLICT (stream) DO NOTHING;
      EXIT WHEN FOUND;
      -- not inserted: a racing writer created the stream and committed meanwhile; check against it
    END LOOP;
    IF outcome IS NULL THEN
      v_pos[i] := v_last;
      v_rev[i] := v_actual;
      v_last := v_last + v_n;
      outcome := 'appended'; new_revision := v_actual + v_n; last_position := v_last; detail := NULL;
    END IF;
    RETURN NEXT;
    outcome := NULL;
  END LOOP;

  IF v_last = v_start THEN
    RETURN;
  END IF;
  UPDATE ${s}.global_position g SET last = v_last;

  -- which append each event belongs to
  v_app := ARRAY(SELECT c.i FROM unnest(p_counts) WITH ORDINALITY AS c(n, i), generate_series(1, c.n) AS k ORDER BY c.i, k);

  PERFORM set_config('steerlog.text_indexing', 'on', true);
  INSERT INTO ${s}.events (position, stream, revision, id, type, time, data, ignorable, metadata, hash, stream_hash, recorded_at)
  SELECT v_pos[u.app] + u.ord - v_first[u.app] + 1, p_streams[u.app], v_rev[u.app] + u.ord - v_first[u.app] + 1,
         u.id, u.type, u.time, u.data::json, coalesce(u.ign, false), u.meta::json, u.hash, p_hashed[u.app], now()
  FROM unnest(v_app, p_ids, p_types, p_times, p_data, p_ignorable, p_metadata, p_hashes)
       WITH ORDINALITY AS u(app, id, type, time, data, ign, meta, hash, ord)
  WHERE v_pos[u.app] IS NOT NULL;
  PERFORM set_config('steerlog.text_indexing', 'off', true);
  INSERT INTO ${s}.event_text (position, text, sealed)
  SELECT v_pos[u.app] + u.ord - v_first[u.app] + 1, u.txt, coalesce(u.sealed, false)
  FROM unnest(v_app, p_texts, p_sealed) WITH ORDINALITY AS u(app, txt, sealed, ord)
  WHERE v_pos[u.app] IS NOT NULL AND (u.txt IS NOT NULL OR coalesce(u.sealed, false));

  -- the session catalog, as append_events keeps it: the last turn/start or turn/end of each append's batch says
  -- whether a turn is open after it (none: unchanged); revision 0 says what the session is
  v_turns := ARRAY(
    SELECT t.type FROM generate_series(1, v_appends) AS c(i)
    LEFT JOIN (SELECT DISTINCT ON (u.app) u.app, u.type FROM unnest(v_app, p_types) WITH ORDINALITY AS u(app, type, ord)
               WHERE u.type IN ('turn/start', 'turn/end') ORDER BY u.app, u.ord DESC) t ON t.app = c.i
    ORDER BY c.i);
  FOR i IN 1 .. v_appends LOOP
    CONTINUE WHEN v_pos[i] IS NULL;
    v_stream := p_streams[i];
    v_n := p_counts[i];
    v_to := v_first[i] + v_n - 1;
    IF v_rev[i] = -1 THEN
      v_created := p_times[v_first[i]];
      v_kind := NULL;
      v_parent := NULL;
      IF p_types[v_first[i]] = 'session/created' THEN
        v_data := p_data[v_first[i]]::json;
        IF json_typeof(v_data) = 'object' THEN
          IF json_typeof(v_data -> 'createdAt') = 'number' THEN v_created := (v_data ->> 'createdAt')::double precision; END IF;
          IF json_typeof(v_data -> 'kind') = 'string' THEN v_kind := v_data ->> 'kind'; END IF;
          IF json_typeof(v_data -> 'parentSession') = 'string' THEN v_parent := v_data ->> 'parentSession'; END IF;
        END IF;
      END IF;
      INSERT INTO ${s}.session_catalog AS c (stream, created_at, kind, parent, last_seq, last_activity, open_turn, chain_head)
      VALUES (v_stream, v_created, v_kind, v_parent, v_rev[i] + v_n, p_times[v_to], coalesce(v_turns[i] = 'turn/start', false), p_hashes[v_to])
      ON CONFLICT (stream) DO UPDATE SET created_at = EXCLUDED.created_at, kind = EXCLUDED.kind, parent = EXCLUDED.parent,
        last_seq = EXCLUDED.last_seq, last_activity = EXCLUDED.last_activity, open_turn = EXCLUDED.open_turn, chain_head = EXCLUDED.chain_head;
    ELSE
      UPDATE ${s}.session_catalog c
      SET last_seq = v_rev[i] + v_n, last_activity = p_times[v_to], chain_head = p_hashes[v_to],
          open_turn = CASE WHEN v_turns[i] IS NULL THEN c.open_turn ELSE v_turns[i] = 'turn/start' END
      WHERE c.stream = v_stream;
      IF NOT FOUND THEN
        -- a row that is missing (removed by hand) is folded again from the stream's events
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
        JOIN ${s}.events l ON l.stream = st.stream AND l.revision = v_rev[i] + v_n
        LEFT JOIN LATERAL (
          SELECT e.type FROM ${s}.events e
          WHERE e.stream = st.stream AND e.revision <= v_rev[i] + v_n AND e.type IN ('turn/start', 'turn/end')
          ORDER BY e.revision DESC LIMIT 1
        ) t ON true
        WHERE st.stream = v_stream;
      END IF;
    END IF;
  END LOOP;

  IF p_notify THEN
    PERFORM pg_notify('${channelName(schema)}', '');
  END IF;
END
$fn$;
`;
  },
};
