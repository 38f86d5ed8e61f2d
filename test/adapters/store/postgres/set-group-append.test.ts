/**
 * Migration 8: the group commit without subtransactions, the chain-hash CHECK without a regular expression, and the
 * row triggers that fire only when they have work. What it must not change: the hash check refuses exactly what the
 * old one refused, `recorded_at` is the database's time whatever a writer sends, an event written without its text
 * index row is marked pending, a store at version 7 with events upgrades and goes on appending, and a group's refused
 * appends leave nothing behind (the counter, the streams, the catalog).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { MIGRATIONS, migratePostgresEventStore, openPostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { streamRevision } from '../../../../runtime/ports/event-store.js';
import { isConcurrencyError } from '../../../../runtime/ports/store-errors.js';
import { describePg, testSchemas } from './pg-test-support.js';

const db = testSchemas({ poolMax: 4 });

/** Migrates `schema` up to `version` as the store would (the migrations recorded). */
const migrateTo = async (schema: string, version: number): Promise<void> => {
  const client = await db.pool.connect();
  try {
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const m of MIGRATIONS.filter((m) => m.version <= version)) {
      await client.query(m.sql(schema));
      await client.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  } finally {
    client.release();
  }
};

const hex = (n: number): string => n.toString(16).padStart(64, '0');
/** Strings near the hash's form: hex digits of both cases, other characters, lengths around 64. */
const nearHashes = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'.split('')), minLength: 62, maxLength: 66 }),
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: 64, maxLength: 64 }).chain((h) =>
    fc.tuple(fc.nat(63), fc.constantFrom('g', 'G', ' ', '\n', '-', 'é', 'x')).map(([i, c]) => h.slice(0, i) + c + h.slice(i + 1)),
  ),
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: 64, maxLength: 64 }).map((h) => `${h}\n`),
  fc.string({ maxLength: 70 }).filter((s) => !s.includes('\u0000')),
);

describePg('PostgreSQL store: migration 8', () => {
  it('the chain-hash check refuses exactly what the regular expression refused', async () => {
    const schema = db.fresh('m8hash');
    await migratePostgresEventStore(db.pool, schema);
    const check = (await db.pool.query<{ def: string }>(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'events_hash_check' AND connamespace = $1::regnamespace`, [schema])).rows;
    expect(check).toHaveLength(1);
    expect(check[0]!.def).not.toContain('~');
    await fc.assert(
      fc.asyncProperty(fc.array(nearHashes, { minLength: 1, maxLength: 20 }), async (hashes) => {
        const rows = (await db.pool.query<{ old: boolean; now: boolean }>(
          `SELECT h ~ '^[0-9a-f]{64}$' AS old, (length(h) = 64 AND ltrim(h, '0123456789abcdef') = '') AS now FROM unnest($1::text[]) AS u(h)`,
          [hashes],
        )).rows;
        expect(rows.map((r) => r.now)).toEqual(rows.map((r) => r.old));
      }),
      { numRuns: 60 },
    );
    // and the table holds to it: a bad hash is refused, a good one stored
    const store = await openPostgresEventStore({ pool: db.pool, schema });
    try {
      await store.append('h', [{ id: 'h0', type: 't', time: 0, data: {}, hash: hex(1) }], 'no_stream');
      await expect(
        db.pool.query(`INSERT INTO "${schema}".events (position, stream, revision, id, type, time, data, hash, stream_hash) VALUES (100, 'raw', 0, 'r', 't', 0, '{}', $1, 0)`, [hex(2).toUpperCase().replace('0', 'A')]),
      ).rejects.toMatchObject({ code: '23514', constraint: 'events_hash_check' });
    } finally {
      await store.close();
    }
  });

  it('a raw insert still gets the database time as recorded_at and a pending text index row', async () => {
    const schema = db.fresh('m8trig');
    await migratePostgresEventStore(db.pool, schema);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const now = (await client.query<{ t: string }>('SELECT now()::text AS t')).rows[0]!.t;
      await client.query(`INSERT INTO "${schema}".events (position, stream, revision, id, type, time, data, stream_hash, recorded_at) VALUES (1000, 'raw', 0, 'r', 't', 0, '{}', 0, '2000-01-01')`);
      await client.query('COMMIT');
      const row = (await db.pool.query<{ at: string; pending: boolean }>(`SELECT e.recorded_at::text AS at, t.pending FROM "${schema}".events e JOIN "${schema}".event_text t USING (position)`)).rows;
      expect(row).toEqual([{ at: now, pending: true }]);
    } finally {
      client.release();
    }
    // the store's own appends: the transaction's time, and their index rows written, not pending
    const store = await openPostgresEventStore({ pool: db.pool, schema });
    try {
      await Promise.all(['a', 'b'].map((s) => store.append(s, [{ id: `${s}0`, type: 'user/message', time: 0, data: { content: [{ type: 'text', text: `hello ${s}` }] } }], 'no_stream')));
      const rows = (await db.pool.query<{ stream: string; fresh: boolean; pending: boolean }>(
        `SELECT e.stream, e.recorded_at > now() - interval '1 minute' AS fresh, t.pending FROM "${schema}".events e JOIN "${schema}".event_text t USING (position) WHERE e.stream <> 'raw' ORDER BY e.stream`,
      )).rows;
      expect(rows).toEqual([{ stream: 'a', fresh: true, pending: false }, { stream: 'b', fresh: true, pending: false }]);
    } finally {
      await store.close();
    }
  });

  it('a store at version 7 with events upgrades to 8 and goes on appending, grouped, after them', async () => {
    const schema = db.fresh('m8up');
    await migrateTo(schema, 7);
    for (const stream of ['old-a', 'old-b']) {
      await db.pool.query(`SELECT * FROM "${schema}".append_events_indexed($1, 'no_stream', $2, $3, $4, $5, $6, $7, $8, false, $9, $10)`, [
        stream, [`${stream}-0`, `${stream}-1`], ['t', 'turn/start'], [1, 2], ['{}', '{}'], [false, false], [null, null], [hex(1), hex(2)], [null, null], [false, false],
      ]);
    }
    expect((await migratePostgresEventStore(db.pool, schema)).applied).toEqual([8]);
    const store = await openPostgresEventStore({ pool: db.pool, schema });
    try {
      const results = await Promise.all([
        store.append('old-a', [{ id: 'old-a-2', type: 'turn/end', time: 3, data: {} }], streamRevision(1)),
        store.append('old-b', [{ id: 'old-b-2', type: 't', time: 3, data: {} }], streamRevision(1)),
        store.append('new-c', [{ id: 'new-c-0', type: 'session/created', time: 4, data: { createdAt: 5, kind: 'ordinary' } }], 'no_stream'),
      ]);
      expect(results.map((r) => [r.nextExpectedRevision, r.position])).toEqual([[2n, 4n], [2n, 5n], [0n, 6n]]);
      const catalog = (await db.pool.query<{ stream: string; last_seq: string; open_turn: boolean; created_at: number }>(`SELECT stream, last_seq::text, open_turn, created_at FROM "${schema}".session_catalog ORDER BY stream`)).rows;
      expect(catalog.map((c) => [c.stream, c.last_seq, c.open_turn])).toEqual([['new-c', '0', false], ['old-a', '2', false], ['old-b', '2', true]]);
      expect(catalog[0]!.created_at).toBe(5);
    } finally {
      await store.close();
    }
  });

  it("a group's refused appends leave nothing behind: the counter, stream rows, events and catalog move only for the accepted ones", async () => {
    const schema = db.fresh('m8refuse');
    await migratePostgresEventStore(db.pool, schema);
    const store = await openPostgresEventStore({ pool: db.pool, schema });
    try {
      await store.append('x', [{ id: 'x0', type: 'turn/start', time: 1, data: {} }], 'no_stream');
      const results = await Promise.allSettled([
        store.append('x', [{ id: 'x1', type: 'turn/end', time: 2, data: {} }], streamRevision(3)), // stale
        store.append('y', [{ id: 'y0', type: 't', time: 2, data: {} }], 'stream_exists'), // no stream
        store.append('x', [{ id: 'x1b', type: 't', time: 2, data: {} }, { id: 'x2b', type: 't', time: 2, data: {} }], streamRevision(0)),
        store.append('z', [{ id: 'z0', type: 't', time: 2, data: {} }], 'any'),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
      expect(isConcurrencyError((results[0] as PromiseRejectedResult).reason)).toBe(true);
      expect(isConcurrencyError((results[1] as PromiseRejectedResult).reason)).toBe(true);
      expect((results[2] as PromiseFulfilledResult<unknown>).value).toEqual({ nextExpectedRevision: 2n, position: 2n });
      expect((results[3] as PromiseFulfilledResult<unknown>).value).toEqual({ nextExpectedRevision: 0n, position: 3n });
      const q = async (sql: string): Promise<unknown[]> => (await db.pool.query(sql)).rows;
      expect(await q(`SELECT last::text FROM "${schema}".global_position`)).toEqual([{ last: '3' }]);
      expect(await q(`SELECT stream, revision::text FROM "${schema}".streams ORDER BY stream`)).toEqual([{ stream: 'x', revision: '2' }, { stream: 'z', revision: '0' }]);
      expect(await q(`SELECT position::text, stream, revision::text, id FROM "${schema}".events ORDER BY position`)).toEqual([
        { position: '0', stream: 'x', revision: '0', id: 'x0' },
        { position: '1', stream: 'x', revision: '1', id: 'x1b' },
        { position: '2', stream: 'x', revision: '2', id: 'x2b' },
        { position: '3', stream: 'z', revision: '0', id: 'z0' },
      ]);
      expect(await q(`SELECT stream, last_seq::text, open_turn FROM "${schema}".session_catalog ORDER BY stream`)).toEqual([
        { stream: 'x', last_seq: '2', open_turn: true },
        { stream: 'z', last_seq: '0', open_turn: false },
      ]);
    } finally {
      await store.close();
    }
  });
});
