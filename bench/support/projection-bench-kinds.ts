import type pg from 'pg';
import { defineKeyedProjection, defineProjection, defineTableProjection } from '../../projections/index.js';

/** Per session: events, steering inserts (splices that inserted something), turns. */
export interface SessionCounts {
  events: number;
  inserts: number;
  turns: number;
}

const count = (s: SessionCounts, type: string, data: unknown): SessionCounts => {
  s.events++;
  if (type === 'turn/start') s.turns++;
  if (type === 'agent/inbox/spliced' && ((data as { inserted?: unknown[] }).inserted?.length ?? 0) > 0) s.inserts++;
  return s;
};

/** The fold the table projection must equal: per session counts. */
export const foldCounts = (state: Map<string, SessionCounts>, stream: string, type: string, data: unknown): void => {
  let s = state.get(stream);
  if (!s) state.set(stream, (s = { events: 0, inserts: 0, turns: 0 }));
  count(s, type, data);
};

/**
 * The table projection of the benchmark: `counts (stream, events, inserts, turns)`, one statement per batch (the
 * batch is aggregated per stream first, then upserted with unnest).
 */
export const benchTable = (version: number) =>
  defineTableProjection<pg.ClientBase>({
    name: 'bench-counts',
    version,
    tables: { counts: 'stream text PRIMARY KEY, events integer NOT NULL, inserts integer NOT NULL, turns integer NOT NULL' },
    handle: async (events, tx, t) => {
      const batch = new Map<string, SessionCounts>();
      for (const e of events) foldCounts(batch, e.stream, e.event.type, e.event.data);
      const rows = [...batch];
      await tx.query(
        `INSERT INTO ${t.counts} AS c (stream, events, inserts, turns)
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[])
         ON CONFLICT (stream) DO UPDATE SET events = c.events + EXCLUDED.events, inserts = c.inserts + EXCLUDED.inserts, turns = c.turns + EXCLUDED.turns`,
        [rows.map(([s]) => s), rows.map(([, c]) => c.events), rows.map(([, c]) => c.inserts), rows.map(([, c]) => c.turns)],
      );
    },
  });

/** The same counts as keyed documents (one per session). */
export const benchKeyed = (version: number) =>
  defineKeyedProjection<SessionCounts>({
    name: 'bench-keyed',
    version,
    initialState: { events: 0, inserts: 0, turns: 0 },
    evolve: (s, e) => count(s, e.event.type, e.event.data),
  });

/** Today's shape: every session's counts in one state blob. */
export const benchBlob = (version: number) =>
  defineProjection<Record<string, SessionCounts>>({
    name: 'bench-blob',
    version,
    initialState: {},
    evolve: (s, e) => {
      count((s[e.stream] ??= { events: 0, inserts: 0, turns: 0 }), e.event.type, e.event.data);
      return s;
    },
  });
