import { afterAll } from 'vitest';
import { openPostgresEventStore } from '../../../adapters/store/postgres/index.js';
import { describePg, dropSchema, PG_URL, uniqueSchema } from '../store/postgres/pg-test-support.js';
import { describeArchiveSuite } from './archive.shared.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
});

describePg('postgres', () => {
  describeArchiveSuite('postgres', {
    open: async () => {
      const schema = uniqueSchema('archive');
      schemas.push(schema);
      return { store: await openPostgresEventStore({ connectionString: PG_URL, schema }), spec: `${PG_URL}?schema=${schema}` };
    },
  });
});
