import pg from 'pg';

/** Where the PostgreSQL tests connect. */
export const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

let counter = 0;
/** A schema name unique to this test run (process) and call. */
export const uniqueSchema = (label: string): string =>
  `stl_${label}_${process.pid}_${Date.now().toString(36)}_${(counter++).toString(36)}`.toLowerCase().slice(0, 48);

export const dropSchema = async (schema: string): Promise<void> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
};
