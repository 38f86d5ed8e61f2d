import { afterAll, beforeAll, beforeEach } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../adapters/store/postgres/index.js';
import { dropSchema, PG_URL, postgresAvailable, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { useSharedTestStore } from './test-store.js';

/**
 * vitest setup file of the "runtime on postgres" project: one PostgreSQL store (its own schema) per test file.
 * When PostgreSQL is not reachable every test of the project is reported as skipped (never silently run on memory).
 */
let store: PostgresEventStore | undefined;
const schema = uniqueSchema('rt');
beforeAll(async () => {
  if (!postgresAvailable) return;
  store = await openPostgresEventStore({ connectionString: PG_URL, schema });
  useSharedTestStore(store);
});
beforeEach((context) => {
  if (!postgresAvailable) context.skip('PostgreSQL is not reachable');
});
afterAll(async () => {
  useSharedTestStore(null);
  await store?.close();
  await dropSchema(schema);
});
