import pg from 'pg';
import { afterAll, beforeAll, describe, inject } from 'vitest';

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

/** What {@link testSchemas} gives a test file. */
export interface TestSchemas {
  /** A new schema name (see {@link uniqueSchema}), dropped after the file. */
  readonly fresh: (label: string) => string;
  /** The file's shared pool (created before the file's tests, ended after them); throws when none was asked for. */
  readonly pool: pg.Pool;
}

/**
 * Registers the `beforeAll`/`afterAll` hooks of a test file that makes its own schemas: every name `fresh` gives is
 * dropped after the file, and with `poolMax` the file shares one pool of that size, ended after it. Nothing is
 * created when PostgreSQL is not available.
 *
 * @param options.poolMax the shared pool's size; default: no shared pool.
 */
export const testSchemas = (options: { readonly poolMax?: number } = {}): TestSchemas => {
  const schemas: string[] = [];
  let shared: pg.Pool | undefined;
  beforeAll(() => {
    if (postgresAvailable && options.poolMax !== undefined) shared = new pg.Pool({ connectionString: PG_URL, max: options.poolMax });
  });
  afterAll(async () => {
    if (!postgresAvailable) return;
    await shared?.end();
    for (const s of schemas) await dropSchema(s);
  });
  return {
    fresh: (label) => {
      const s = uniqueSchema(label);
      schemas.push(s);
      return s;
    },
    get pool(): pg.Pool {
      if (shared === undefined) throw new Error('testSchemas: no shared pool (pass poolMax, and use it inside a test)');
      return shared;
    },
  };
};

/** What {@link schemaFixture} gives a suite: read its fields inside a test (they are set before the suite's tests). */
export interface SchemaFixture<T> {
  /** The suite's schema (see {@link uniqueSchema}), dropped after the suite. */
  readonly schema: string;
  /** What `open` made for the schema, closed after the suite. */
  readonly opened: T;
  /** A client of its own, connected before the suite's tests, ended after them (for the suite's checks in SQL). */
  readonly client: pg.Client;
}

/**
 * Registers the `beforeAll`/`afterAll` hooks of a suite over one schema: before its tests, `open(schema)` (a store
 * of the schema) and a connected client; after them, both closed and the schema dropped. Call it inside the suite's
 * `describePg`, so nothing is opened when PostgreSQL is not available.
 */
export const schemaFixture = <T extends { close(): Promise<unknown> }>(label: string, open: (schema: string) => T | Promise<T>): SchemaFixture<T> => {
  const schema = uniqueSchema(label);
  let opened: T | undefined;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    opened = await open(schema);
    client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
  });
  afterAll(async () => {
    await opened?.close();
    await client?.end();
    await dropSchema(schema);
  });
  const ready = <V>(value: V | undefined): V => {
    if (value === undefined) throw new Error(`schemaFixture(${label}): read inside a test, after the suite's set-up`);
    return value;
  };
  return {
    schema,
    get opened() {
      return ready(opened);
    },
    get client() {
      return ready(client);
    },
  };
};
