/**
 * `steerlog archive` from an `esdb://` store, end to end through the CLI, against the in-process *protocol fake*
 * (test/adapters/store/eventstoredb/fake; not EventStoreDB: see docs/store-eventstoredb.md): the shared archive
 * suite — what moves, what stays, the archive answering audit/verify/why byte for byte as the live store did, the
 * moved sessions tombstoned. This file loads `@eventstore/db-client` (isolated in vitest.config.ts).
 */
import { afterAll } from 'vitest';
import { openEventStoreDbStore } from '../../../adapters/store/eventstoredb/index.js';
import { FakeEsdb } from '../store/eventstoredb/fake/esdb-fake.js';
import { describeArchiveSuite } from './archive.shared.js';

const fakes: FakeEsdb[] = [];
afterAll(async () => {
  for (const f of fakes) await f.stop();
});

describeArchiveSuite('eventstoredb (protocol fake)', {
  // a fresh fake each time: the fixture's session ids are fixed, and a tombstoned id can never be written again
  open: async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    fakes.push(fake);
    return { store: openEventStoreDbStore({ connectionString: fake.connectionString }), spec: fake.connectionString };
  },
});
