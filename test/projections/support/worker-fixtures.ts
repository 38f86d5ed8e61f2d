import type pg from 'pg';
import type { LogEvent } from '../../../domain/events.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { defineKeyedProjection, defineTableProjection, type ProjectionEvent } from '../../../projections/index.js';
import { LogBuilder, msg } from '../../../testing/log-builder.js';
import { toNew } from './projection-fixtures.js';

/** A session log of `turns` turns (a follow-up, a claim, one step, the end each), from the deciders. */
export const sessionLog = (id: string, turns: number): LogEvent[] => {
  const b = new LogBuilder(id);
  for (let t = 0; t < turns; t++) b.followup(msg(`${id}-m${t}`)).runTurn();
  return [...b.events];
};

/** Appends `events` to `stream` in chunks (each chunk one append). */
export const appendChunks = async (store: EventStore, stream: string, events: readonly LogEvent[], chunk = 7): Promise<void> => {
  for (let i = 0; i < events.length; i += chunk) await store.append(stream, events.slice(i, i + chunk).map(toNew), 'any');
};

/** Per stream: how many events, the last seq, and an order-sensitive digest. */
export interface Tally {
  n: number;
  last: number;
  digest: number;
}

const step = (state: Tally, e: { event: { seq: number; type: string } }): Tally => {
  // an event applied twice, skipped or out of order breaks the chain: the fold refuses it
  if (e.event.seq !== state.last + 1) throw new Error(`seq ${e.event.seq} after ${state.last}`);
  state.n++;
  state.last = e.event.seq;
  state.digest = (Math.imul(state.digest, 31) + e.event.seq * 7 + e.event.type.length) | 0;
  return state;
};

/** The keyed tally: one document per stream. */
export const keyedTally = (name = 'tally', version = 1) =>
  defineKeyedProjection<Tally>({ name, version, initialState: { n: 0, last: -1, digest: 17 }, evolve: step, evolveIgnored: step });

/** The same fold without a worker: stream → tally. */
export const foldTally = (logs: ReadonlyMap<string, readonly LogEvent[]>): Map<string, Tally> =>
  new Map([...logs].map(([stream, events]) => [stream, events.reduce((s, event) => step(s, { event }), { n: 0, last: -1, digest: 17 })]));

/**
 * The table tally on PostgreSQL: `tally (stream, n, last_seq)` plus `applied (stream, seq)` with a primary key, so an
 * event applied twice fails its batch and an applied count per stream says what was applied.
 */
export const tableTally = (name = 'ttally', version = 1, fail?: (e: ProjectionEvent) => boolean) =>
  defineTableProjection<pg.ClientBase>({
    name,
    version,
    tables: { tally: 'stream text PRIMARY KEY, n integer NOT NULL, last_seq integer NOT NULL', applied: 'stream text NOT NULL, seq integer NOT NULL, PRIMARY KEY (stream, seq)' },
    handle: async (events, tx, t) => {
      for (const e of events) {
        if (fail?.(e)) throw new Error(`refused ${e.stream}#${e.event.seq}`);
        await tx.query(`INSERT INTO ${t.applied} (stream, seq) VALUES ($1, $2)`, [e.stream, e.event.seq]);
        await tx.query(
          `INSERT INTO ${t.tally} AS x (stream, n, last_seq) VALUES ($1, 1, $2)
           ON CONFLICT (stream) DO UPDATE SET n = x.n + 1, last_seq = GREATEST(x.last_seq, EXCLUDED.last_seq)`,
          [e.stream, e.event.seq],
        );
      }
    },
  });
