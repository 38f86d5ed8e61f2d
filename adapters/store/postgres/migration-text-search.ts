import type { Migration } from './schema-names.js';

/**
 * Migration 4: the text index `steerlog search` reads on PostgreSQL, maintained with the events.
 *
 * - `event_text` holds, per event whose text search reads, that text lower-cased by the writer (the same text and
 *   the same lower-casing as the streaming scan, so both answer the same), or `sealed` when the event carries
 *   sealed content (its text is never stored in clear: a search opens it with the reader's key), or `pending` when
 *   it was written by a path that did not index it (events stored before this migration, or an older writer).
 * - `append_events_indexed(…, p_texts, p_sealed)` is `append_events` and the index rows, in one statement: it
 *   names itself in the transaction-local setting `steerlog.text_indexing`, so the insert trigger that marks other
 *   writers' events `pending` leaves its events to it.
 * - With the `pg_trgm` extension (created here when the role may; else left out), a GIN trigram index serves the
 *   search's substring matches (`LIKE '%word%'`); without it the same query reads the table through.
 * - A deleted stream's rows go with its events (an `AFTER DELETE` trigger).
 */
export const TEXT_SEARCH_MIGRATION: Migration = {
  version: 4,
  name: 'text search index: event_text, append_events_indexed(), pending rows for events written without it',
  sql: (schema) => {
    const s = `"${schema}"`;
    return `
CREATE TABLE ${s}.event_text (
  position bigint  PRIMARY KEY,
  text     text,
  sealed   boolean NOT NULL DEFAULT false,
  pending  boolean NOT NULL DEFAULT false
);
INSERT INTO ${s}.event_text (position, pending) SELECT position, true FROM ${s}.events;

CREATE FUNCTION ${s}.mark_text_pending() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF coalesce(current_setting('steerlog.text_indexing', true), '') <> 'on' THEN
    INSERT INTO ${s}.event_text (position, pending) VALUES (NEW.position, true);
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER events_text_pending AFTER INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.mark_text_pending();

-- a deleted stream's index rows go with its events (a trigger, not a foreign key: the events table's own refusal of
-- TRUNCATE must stay the one that answers)
CREATE FUNCTION ${s}.drop_event_text() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  DELETE FROM ${s}.event_text WHERE position = OLD.position;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER events_text_deleted AFTER DELETE ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.drop_event_text();

CREATE FUNCTION ${s}.append_events_indexed(
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

DO $do$
DECLARE
  v_ns text;
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN others THEN
    RAISE NOTICE 'steerlog: pg_trgm is not available (%); text search reads event_text without an index', SQLERRM;
  END;
  SELECT n.nspname INTO v_ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF v_ns IS NOT NULL THEN
    EXECUTE format('CREATE INDEX event_text_trgm ON %s.event_text USING gin (text %I.gin_trgm_ops) WHERE text IS NOT NULL', '${s}', v_ns);
  END IF;
END
$do$;
`;
  },
};
