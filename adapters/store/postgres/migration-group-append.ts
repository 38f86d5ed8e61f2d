import type { Migration } from './schema-names.js';

/**
 * Migration 7: appends to several streams in one transaction (the store's group commit), and the lock order that
 * makes it safe.
 *
 * - `append_events_indexed` takes the global counter's row (`global_position`) first, before the stream's head row:
 *   every append, grouped or not, locks the counter, then stream rows. A transaction appending to several streams
 *   holds the counter from its first append, so it could otherwise wait for a stream row held by a writer that
 *   waits for the counter (a deadlock); with one order no writer holding a stream row ever waits for the counter.
 *   The counter was already held from the position's update to commit, so appends were already serialized from
 *   there: what changes is that the stream's lock and checks (microseconds) now run under it too.
 * - `append_events_group(streams, expected, counts, <the event columns of all the appends, concatenated>, notify,
 *   texts, sealed)` runs the appends in array order, each through `append_events_indexed` inside a block of its own
 *   (a subtransaction): a refusal — wrong expected revision (SLC01), a deleted stream (SLC03), an id already stored
 *   (23505) — rolls back that append alone (its counter update included, so positions stay contiguous) and is
 *   returned as its row's `outcome` with the DETAIL (SLC01: the actual revision) or the constraint (23505) in
 *   `detail`; every other append of the call commits with the call. Any other error fails the whole call. One row
 *   per append, in order: `outcome` 'appended' with the revision and last position, or the SQLSTATE.
 *   The NOTIFY of each append is the same (channel, empty payload), so the transaction delivers it once, at commit.
 */
export const GROUP_APPEND_MIGRATION: Migration = {
  version: 7,
  name: 'append_events_group(): several streams in one transaction; the global counter locked before the stream row',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
CREATE OR REPLACE FUNCTION ${s}.append_events_indexed(
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
  p_texts     text[],
  p_sealed    boolean[],
  OUT new_revision  bigint,
  OUT last_position bigint
)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n integer := coalesce(cardinality(p_ids), 0);
BEGIN
  -- the counter before the stream's row: one lock order for every append (see append_events_group)
  IF v_n > 0 THEN
    PERFORM 1 FROM ${s}.global_position FOR UPDATE;
  END IF;
  PERFORM set_config('steerlog.text_indexing', 'on', true);
  SELECT a.new_revision, a.last_position INTO new_revision, last_position
  FROM ${s}.append_events(p_stream, p_expected, p_ids, p_types, p_times, p_data, p_ignorable, p_metadata, p_hashes, p_notify) a;
  PERFORM set_config('steerlog.text_indexing', 'off', true);
  IF v_n > 0 THEN
    INSERT INTO ${s}.event_text (position, text, sealed)
    SELECT last_position - v_n + u.ord, u.txt, coalesce(u.sealed, false)
    FROM unnest(p_texts, p_sealed) WITH ORDINALITY AS u(txt, sealed, ord)
    WHERE u.txt IS NOT NULL OR coalesce(u.sealed, false);
  END IF;
END
$fn$;

CREATE FUNCTION ${s}.append_events_group(
  p_streams   text[],
  p_expected  text[],
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
  p_sealed    boolean[]
)
RETURNS TABLE (outcome text, new_revision bigint, last_position bigint, detail text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_from       integer := 1;
  v_to         integer;
  v_state      text;
  v_detail     text;
  v_constraint text;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_streams), 0) LOOP
    v_to := v_from + p_counts[i] - 1;
    BEGIN
      SELECT a.new_revision, a.last_position INTO new_revision, last_position
      FROM ${s}.append_events_indexed(p_streams[i], p_expected[i], p_ids[v_from:v_to], p_types[v_from:v_to],
        p_times[v_from:v_to], p_data[v_from:v_to], p_ignorable[v_from:v_to], p_metadata[v_from:v_to],
        p_hashes[v_from:v_to], p_notify, p_texts[v_from:v_to], p_sealed[v_from:v_to]) a;
      outcome := 'appended';
      detail := NULL;
    EXCEPTION WHEN SQLSTATE 'SLC01' OR SQLSTATE 'SLC03' OR unique_violation THEN
      GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_detail = PG_EXCEPTION_DETAIL, v_constraint = CONSTRAINT_NAME;
      outcome := v_state;
      new_revision := NULL;
      last_position := NULL;
      detail := CASE WHEN v_state = '23505' THEN v_constraint ELSE v_detail END;
    END;
    RETURN NEXT;
    v_from := v_to + 1;
  END LOOP;
END
$fn$;
`;
  },
};
