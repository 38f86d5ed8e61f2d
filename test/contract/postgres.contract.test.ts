import { afterAll } from 'vitest';
import { openPostgresEventStore, type PostgresEventStore } from '../../adapters/store/postgres/index.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { describeEventStoreContract } from './event-store.contract.js';

// One schema for this run; every test opens its own store (its own pool) on it and uses unique stream names.
const schema = uniqueSchema('contract');
afterAll(async () => {
  await dropSchema(schema);
});

describePg('postgres', () => {
  describeEventStoreContract('postgres', {
    create: async () => openPostgresEventStore({ connectionString: PG_URL, schema, poolSize: 4 }),
    // A second pool (separate connections) on the same schema: the racing writers really race in the database.
    openPeer: async (store) => openPostgresEventStore({ connectionString: PG_URL, schema: (store as PostgresEventStore).schema, poolSize: 4 }),
  });
});
