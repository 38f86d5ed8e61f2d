import { afterAll } from 'vitest';
import { openPostgresEventStore } from '../../adapters/store/postgres/index.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../adapters/store/postgres/pg-test-support.js';
import { describeCatchUpLive } from './catch-up-live.shared.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});
describePg('projections on postgres', () => {
  describeCatchUpLive('postgres', {
    create: async () => {
      const schema = uniqueSchema('proj');
      schemas.push(schema);
      return openPostgresEventStore({ connectionString: PG_URL, schema });
    },
  });
});
