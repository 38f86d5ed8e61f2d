import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../../../adapters/store/postgres/index.js';
import { streamRevision } from '../../../../runtime/ports/event-store.js';
import { collect, ev } from '../../../contract/event-store.contract.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from './pg-test-support.js';

const schema = uniqueSchema('deletion');
let store: PostgresEventStore;
let pool: pg.Pool;
beforeAll(async () => {
  store = await openPostgresEventStore({ connectionString: PG_URL, schema });
  pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
});
afterAll(async () => {
  await store?.close();
  await pool?.end();
  await dropSchema(schema);
});

describePg('PostgreSQL: deleting a stream only through delete_stream()', () => {
  const events = `"${schema}".events`;
  const count = async (stream: string): Promise<number> => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${events} WHERE stream = $1`, [stream])).rows[0]!.n;

  it('a plain DELETE is still refused, and so is one under the setting without an archival record', async () => {
    await store.append('pg-keep', [ev('a'), ev('b')], 'no_stream');
    await expect(pool.query(`DELETE FROM ${events} WHERE stream = 'pg-keep'`)).rejects.toMatchObject({ code: 'SLC02' });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT set_config('steerlog.deleting_stream', 'pg-keep', true)`);
      await expect(client.query(`DELETE FROM ${events} WHERE stream = 'pg-keep'`)).rejects.toMatchObject({ code: 'SLC02' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await expect(pool.query(`UPDATE ${events} SET type = 'x' WHERE stream = 'pg-keep'`)).rejects.toMatchObject({ code: 'SLC02' });
    await expect(pool.query(`TRUNCATE ${events}`)).rejects.toMatchObject({ code: 'SLC02' });
    expect(await count('pg-keep')).toBe(2);
  });

  it('deleteStream deletes the events in one transaction and records who archived what, when and why', async () => {
    await store.append('pg-gone', [ev('g0'), ev('g1'), ev('g2')], 'no_stream');
    await store.deleteStream('pg-gone', streamRevision(2), { reason: 'archived to a.jsonl.gz' });
    expect(await count('pg-gone')).toBe(0);
    expect(await collect(() => store.read('pg-gone'))).toEqual([]);
    const rows = await pool.query(`SELECT stream, revision::int, events::int, reason, archived_by = current_user AS by_me, archived_at <= now() AS past FROM "${schema}".archived_streams`);
    expect(rows.rows).toEqual([{ stream: 'pg-gone', revision: 2, events: 3, reason: 'archived to a.jsonl.gz', by_me: true, past: true }]);
    // the setting does not outlive delete_stream: a DELETE later in the same transaction is refused
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT "${schema}".delete_stream('pg-keep', 1, 'test')`);
      await expect(client.query(`DELETE FROM ${events} WHERE stream = 'pg-other'`)).resolves.toBeDefined(); // no rows: nothing to refuse
      await store.append('pg-after', [ev('x')], 'no_stream');
      await expect(client.query(`DELETE FROM ${events} WHERE stream = 'pg-after'`)).rejects.toMatchObject({ code: 'SLC02' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await count('pg-keep')).toBe(2);
    expect(await count('pg-after')).toBe(1);
  });
});
