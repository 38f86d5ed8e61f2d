import { afterAll, beforeAll, describe } from 'vitest';
import { openEventStoreDbStore } from '../../adapters/store/eventstoredb/index.js';
import { FakeEsdb } from '../adapters/store/eventstoredb/fake/esdb-fake.js';
import { describeCatchUpLive } from './catch-up-live.shared.js';

describe('projections on eventstoredb — protocol fake (BatchAppend)', () => {
  const fake = new FakeEsdb({ features: 'batch-append' });
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());
  describeCatchUpLive('eventstoredb — protocol fake', { create: async () => openEventStoreDbStore({ connectionString: fake.connectionString }) });
});
