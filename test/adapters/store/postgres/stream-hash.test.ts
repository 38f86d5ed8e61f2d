import fc from 'fast-check';
import { expect, it } from 'vitest';
import { MIGRATIONS, migratePostgresEventStore, openPostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { partitionOf, streamHashOf } from '../../../../runtime/ports/stream-partition.js';
import { describePg, testSchemas } from './pg-test-support.js';

const db = testSchemas({ poolMax: 2 });
const fresh = db.fresh;

/** Stream ids the store accepts: no U+0000, no lone surrogate (any other code point, ASCII or not). */
const streamIds = fc.string({ unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom('a', 'é', '✓', '😀', '-', '/')), minLength: 1, maxLength: 40 }).filter((s) => !s.includes('\u0000'));

describePg('the stream hash in SQL and in the runtime', () => {
  it('stream_hash(text) in SQL equals streamHashOf (FNV-1a of the UTF-8 bytes), so partitionOf agrees for any count', async () => {
    const schema = fresh('hash');
    await migratePostgresEventStore(db.pool, schema);
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(streamIds, { minLength: 1, maxLength: 30 }), fc.integer({ min: 2, max: 64 }), async (ids, count) => {
        const rows = (await db.pool.query<{ h: string; p: string }>(`SELECT "${schema}".stream_hash(s)::text AS h, ("${schema}".stream_hash(s) % $2)::text AS p FROM unnest($1::text[]) WITH ORDINALITY AS u(s, i) ORDER BY i`, [ids, count])).rows;
        expect(rows.map((r) => Number(r.h))).toEqual(ids.map(streamHashOf));
        expect(rows.map((r) => Number(r.p))).toEqual(ids.map((id) => partitionOf(id, count)));
      }),
      { numRuns: 40 },
    );
    // fixed points: FNV-1a's published values
    expect(streamHashOf('')).toBe(0x811c9dc5);
    expect(streamHashOf('a')).toBe(0xe40c292c);
    expect(streamHashOf('foobar')).toBe(0xbf9cf968);
  });

  it('migration 5 fills stream_hash for the events already stored; appends write it; a partitioned read returns them', async () => {
    const schema = fresh('hash_mig');
    // a store at schema version 4, with events written by version 4's append_events
    const client = await db.pool.connect();
    try {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
        await client.query(m.sql(schema));
        await client.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
      for (const stream of ['old-a', 'old-b', 'vieux-ç', 'old-d']) {
        await client.query(`SELECT * FROM "${schema}".append_events($1, 'any', $2, $3, $4, $5, $6, $7, $8, false)`, [
          stream, [`${stream}-1`, `${stream}-2`], ['t', 't'], [1, 2], ['{}', '{}'], [false, false], [null, null], [null, null],
        ]);
      }
    } finally {
      client.release();
    }
    expect((await migratePostgresEventStore(db.pool, schema)).applied).toEqual([5, 6, 7, 8]);
    const store = await openPostgresEventStore({ pool: db.pool, schema });
    try {
      await store.append('new-e', [{ id: 'e1', type: 't', time: 3, data: {} }], 'no_stream');
      const stored = (await db.pool.query<{ stream: string; h: string }>(`SELECT stream, stream_hash::text AS h FROM "${schema}".events ORDER BY position`)).rows;
      expect(stored).toHaveLength(9);
      for (const row of stored) expect(Number(row.h)).toBe(streamHashOf(row.stream));
      const all: string[] = [];
      for await (const e of store.readAll()) all.push(e.stream);
      for (const keep of [[0], [1], [2], [0, 2]]) {
        const got: string[] = [];
        for await (const e of store.readAll({ partition: { count: 3, keep } })) got.push(e.stream);
        expect(got).toEqual(all.filter((s) => keep.includes(partitionOf(s, 3))));
      }
    } finally {
      await store.close();
    }
  });
});
