/**
 * Example table projection (PostgreSQL): per session, its events, turns and steering inserts, in your own table,
 * written in the same transaction as the worker's checkpoint (exactly-once effects). A batch is folded in memory
 * first, then written with ONE multi-row statement (unnest), not one statement per event: a worker hands `handle`
 * up to 5,000 events at a time while catching up.
 *
 * Loadable by `steerlog project <module> --follow`, `steerlog serve --projection <module>` and
 * `steerlog projections rebuild <module>` (in a package: `from 'steerlog/projections'`).
 */
import type pg from 'pg';
import { defineTableProjection } from '../../projections/index.js';

// #region table-projection
const sessionCounts = defineTableProjection<pg.ClientBase>({
  name: 'session-counts',
  version: 1,
  tables: { counts: 'stream text PRIMARY KEY, events integer NOT NULL, turns integer NOT NULL, steered integer NOT NULL' },
  handle: async (events, tx, tables) => {
    const batch = new Map<string, { events: number; turns: number; steered: number }>();
    for (const { stream, event } of events) {
      const c = batch.get(stream) ?? { events: 0, turns: 0, steered: 0 };
      c.events++;
      if (event.type === 'turn/start') c.turns++;
      if (event.type === 'agent/inbox/spliced' && event.data.target === 'next-step') c.steered += event.data.inserted.length;
      batch.set(stream, c);
    }
    const rows = [...batch];
    await tx.query(
      `INSERT INTO ${tables.counts} AS c (stream, events, turns, steered)
       SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[])
       ON CONFLICT (stream) DO UPDATE SET events = c.events + EXCLUDED.events, turns = c.turns + EXCLUDED.turns,
         steered = c.steered + EXCLUDED.steered`,
      [rows.map(([s]) => s), rows.map(([, c]) => c.events), rows.map(([, c]) => c.turns), rows.map(([, c]) => c.steered)],
    );
  },
});
// #endregion table-projection
export default sessionCounts;
