import { afterAll, beforeAll } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../adapters/store/postgres/index.js';
import { dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { useSharedTestStore } from './test-store.js';

/** vitest setup file of the "runtime on postgres" project: one PostgreSQL store (its own schema) per test file. */
let store: PostgresEventStore | undefined;
const schema = uniqueSchema('rt');
beforeAll(async () => {
  store = await openPostgresEventStore({ connectionString: PG_URL, schema });
  useSharedTestStore(store);
});
afterAll(async () => {
  useSharedTestStore(null);
  await store?.close();
  await dropSchema(schema);
});
