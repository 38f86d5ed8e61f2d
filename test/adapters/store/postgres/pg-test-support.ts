import pg from 'pg';
import { describe, inject } from 'vitest';

/** Where the PostgreSQL tests connect. */
export const PG_URL = process.env['PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether the server at `PG_URL` answered when the run started (probed once by test/support/global-setup.ts).
 * When it did not, the run already failed if `STEERLOG_REQUIRE_PG=1` (CI), or printed one line saying the
 * PostgreSQL suites are skipped.
 */
export const postgresAvailable: boolean = inject('postgresAvailable');

/** `describe` for a suite that needs PostgreSQL: reported as skipped when the server is not reachable. */
export const describePg: typeof describe.skipIf extends (c: unknown) => infer D ? D : never = describe.skipIf(!postgresAvailable);

let counter = 0;
/** A schema name unique to this test run (process) and call. */
export const uniqueSchema = (label: string): string =>
  `stl_${label}_${process.pid}_${Date.now().toString(36)}_${(counter++).toString(36)}`.toLowerCase().slice(0, 48);

/** Drops a test schema (nothing to do when PostgreSQL is not available: nothing was created). */
export const dropSchema = async (schema: string): Promise<void> => {
  if (!postgresAvailable) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
};
