import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { storeEnvelopes } from '../../../audit/log-sources.js';
import { openPostgresEventStore, type PostgresEventStore } from '../../../adapters/store/postgres/index.js';
import { asNewEvents, chainedSession } from '../../support/chained-session.js';
import { dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { describeTamperSuite } from './tamper.shared.js';

const schema = uniqueSchema('tamper');
let store: PostgresEventStore;
let pool: pg.Pool;
beforeAll(async () => {
  store = await openPostgresEventStore({ connectionString: PG_URL, schema });
  pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
});
afterAll(async () => {
  await store.close();
  await pool.end();
  await dropSchema(schema);
});

describeTamperSuite('postgres', { store: () => store, positions: (n) => [0, 4, n - 1] });

describe('tamper evidence — PostgreSQL in place', () => {
  const events = `"${schema}".events`;

  it('refuses UPDATE, DELETE and TRUNCATE on the events table, and stamps recorded_at on the server', async () => {
    const sid = 'pg-append-only';
    await store.append(sid, asNewEvents(await chainedSession(sid)), 'no_stream');
    const before = (await pool.query(`SELECT count(*)::int AS n FROM ${events} WHERE stream = $1`, [sid])).rows[0];
    for (const sql of [
      `UPDATE ${events} SET data = '{"forged":true}' WHERE stream = '${sid}' AND revision = 1`,
      `DELETE FROM ${events} WHERE stream = '${sid}' AND revision = 1`,
      `TRUNCATE ${events}`,
    ]) {
      await expect(pool.query(sql)).rejects.toMatchObject({ code: 'SLC02' });
    }
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${events} WHERE stream = $1`, [sid])).rows[0]).toEqual(before);
    const stamped = await pool.query<{ ok: boolean }>(
      `SELECT bool_and(recorded_at IS NOT NULL AND recorded_at > now() - interval '1 hour' AND recorded_at <= now()) AS ok FROM ${events} WHERE stream = $1`,
      [sid],
    );
    expect(stamped.rows[0]!.ok).toBe(true);
    expect((await verifySession(sid, storeEnvelopes(store, sid))).ok).toBe(true);
  });

  it('a DBA who disables the trigger and runs a plain UPDATE or DELETE is found at the seq touched', async () => {
    const updated = 'pg-updated';
    const deleted = 'pg-deleted';
    await store.append(updated, asNewEvents(await chainedSession(updated)), 'no_stream');
    await store.append(deleted, asNewEvents(await chainedSession(deleted)), 'no_stream');
    await pool.query(`ALTER TABLE ${events} DISABLE TRIGGER events_append_only`);
    try {
      await pool.query(`UPDATE ${events} SET data = replace(data::text, 'find it', 'wipe it')::json WHERE stream = $1 AND type = 'user/message'`, [updated]);
      await pool.query(`DELETE FROM ${events} WHERE stream = $1 AND revision = 6`, [deleted]);
    } finally {
      await pool.query(`ALTER TABLE ${events} ENABLE TRIGGER events_append_only`);
    }
    const u = await verifySession(updated, storeEnvelopes(store, updated));
    expect(u.break).toMatchObject({ kind: 'hash-mismatch', seq: 5 });
    const d = await verifySession(deleted, storeEnvelopes(store, deleted));
    expect(d.break).toMatchObject({ kind: 'seq-mismatch', seq: 6, found: 7 });
  });
});
