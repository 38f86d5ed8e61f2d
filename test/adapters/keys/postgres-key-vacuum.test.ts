import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresKeyStore } from '../../../adapters/keys/postgres-key-store.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../store/postgres/pg-test-support.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});

/** The key table's heap file as it is on disk after a checkpoint (what VACUUM FULL leaves behind). */
const heapOf = async (client: pg.Client, table: string): Promise<Buffer> => {
  await client.query('CHECKPOINT');
  const { rows } = await client.query<{ b: Buffer }>(`SELECT pg_read_binary_file(pg_relation_filepath($1::regclass)) AS b`, [table]);
  return rows[0]!.b;
};

describe.skipIf(!postgresAvailable)('PostgresKeyStore destroy on a busy database', () => {
  it('waits for a snapshot older than the destroy before VACUUM FULL, so no dead row version keeps the key bytes', async () => {
    const schema = uniqueSchema('keyvac');
    schemas.push(schema);
    const keys = new PostgresKeyStore({ connection: PG_URL, schema });
    const other = new pg.Client({ connectionString: PG_URL });
    const admin = new pg.Client({ connectionString: PG_URL });
    await Promise.all([other.connect(), admin.connect()]);
    try {
      const bytes = new Uint8Array(randomBytes(32));
      await keys.put({ keyId: 'k1', session: 's1', createdAt: 1, key: bytes });
      expect((await heapOf(admin, keys.table)).includes(Buffer.from(bytes))).toBe(true);
      // another session holds a snapshot taken before the destroy (a long report, a backup, a slow reader)
      await other.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await other.query('SELECT 1'); // a snapshot, and no lock on the key table
      let destroyed = false;
      const destroying = keys.destroy({ session: 's1' }, 2).then((d) => {
        destroyed = true;
        return d;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // the destroy is still waiting for that snapshot: VACUUM FULL now would have to keep the old row version
      expect(destroyed).toBe(false);
      await other.query('COMMIT');
      expect((await destroying).map((d) => d.keyId)).toEqual(['k1']);
      expect((await heapOf(admin, keys.table)).includes(Buffer.from(bytes))).toBe(false);
    } finally {
      await other.end();
      await admin.end();
      await keys.close();
    }
  });
});
