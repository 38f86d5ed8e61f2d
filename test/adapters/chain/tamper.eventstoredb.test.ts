import { afterAll, beforeAll } from 'vitest';
import { openEventStoreDbStore } from '../../../adapters/store/eventstoredb/index.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { FakeEsdb } from '../store/eventstoredb/fake/esdb-fake.js';
import { describeTamperSuite } from './tamper.shared.js';

const fake = new FakeEsdb({ features: 'batch-append' });
let store: EventStore;
beforeAll(async () => {
  await fake.start();
  store = await openEventStoreDbStore({ connectionString: fake.connectionString });
});
afterAll(async () => {
  await store.close();
  await fake.stop();
});

describeTamperSuite('eventstoredb protocol fake', { store: () => store, positions: (n) => [0, 3, n - 1] });
