import pg from 'pg';
import { expect, it } from 'vitest';
import {
  LATEST_SCHEMA_VERSION,
  migratePostgresEventStore,
  openPostgresEventStore,
} from '../../../../adapters/store/postgres/index.js';
import { describePg, PG_URL, testSchemas } from './pg-test-support.js';

const { fresh } = testSchemas();

const migrationRows = async (pool: pg.Pool, schema: string): Promise<number[]> =>
  (await pool.query<{ version: number }>(`SELECT version FROM "${schema}".migrations ORDER BY version`)).rows.map((r) => r.version);

describePg('PostgreSQL store migration', () => {
  it('creates the schema once; running it again applies nothing and keeps the data', async () => {
    const schema = fresh('mig');
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    try {
      expect(await migratePostgresEventStore(pool, schema)).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8], version: LATEST_SCHEMA_VERSION });
      const store = await openPostgresEventStore({ pool, schema });
      await store.append('s', [{ id: 'a', type: 't', time: 1, data: {} }], 'no_stream');
      await store.close();
      expect(await migratePostgresEventStore(pool, schema)).toEqual({ applied: [], version: LATEST_SCHEMA_VERSION });
      expect(await migrationRows(pool, schema)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const again = await openPostgresEventStore({ pool, schema });
      expect(await again.revision('s')).toBe(0n);
      await again.close();
      // The caller's pool is not ended by close().
      expect((await pool.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    } finally {
      await pool.end();
    }
  });

  it('is safe when many processes migrate the same fresh schema at once', async () => {
    const schema = fresh('migrace');
    const pools = Array.from({ length: 8 }, () => new pg.Pool({ connectionString: PG_URL, max: 1 }));
    try {
      const reports = await Promise.all(pools.map((p) => migratePostgresEventStore(p, schema)));
      expect(reports.filter((r) => r.applied.length > 0)).toEqual([{ applied: [1, 2, 3, 4, 5, 6, 7, 8], version: LATEST_SCHEMA_VERSION }]);
      expect(await migrationRows(pools[0]!, schema)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // And stores opening at once on an already-current schema.
      const stores = await Promise.all(pools.map((pool) => openPostgresEventStore({ pool, schema })));
      await Promise.all(stores.map((s, i) => s.append(`s-${i}`, [{ id: 'x', type: 't', time: 0, data: i }], 'no_stream')));
      expect((await pools[0]!.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0]).toEqual({ n: 8 });
      await Promise.all(stores.map((s) => s.close()));
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('refuses a schema migrated by a newer version, and invalid schema names', async () => {
    const schema = fresh('mignew');
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    try {
      await migratePostgresEventStore(pool, schema);
      await pool.query(`INSERT INTO "${schema}".migrations (version, name) VALUES ($1, 'from the future')`, [LATEST_SCHEMA_VERSION + 1]);
      await expect(openPostgresEventStore({ pool, schema })).rejects.toMatchObject({ code: 'store-io' });
      await expect(openPostgresEventStore({ pool, schema: 'Robert"; DROP TABLE x; --' })).rejects.toThrow(/invalid schema name/);
    } finally {
      await pool.end();
    }
  });
});
