/**
 * `steerlog archive` from a `kurrentdb://` store, end to end through the CLI, against the in-process *protocol fake*
 * hosting `@kurrent/kurrentdb-client`'s own stubs (not KurrentDB: see docs/store-eventstoredb.md): the shared archive
 * suite, as for `esdb://` (archive.eventstoredb.test.ts). This file must never load `@eventstore/db-client`
 * (isolated in vitest.config.ts); its last test checks that.
 */
import { createRequire } from 'node:module';
import { afterAll, expect, it, vi } from 'vitest';
import { openKurrentDbStore } from '../../../adapters/store/kurrentdb/index.js';
import { FakeEsdb } from '../store/eventstoredb/fake/esdb-fake.js';
import { describeArchiveSuite } from './archive.shared.js';

vi.mock('../store/eventstoredb/fake/stubs.js', () => import('../store/kurrentdb/kurrent-stubs.js'));

const fakes: FakeEsdb[] = [];
afterAll(async () => {
  for (const f of fakes) await f.stop();
});

describeArchiveSuite('kurrentdb (protocol fake)', {
  // a fresh fake each time: the fixture's session ids are fixed, and a tombstoned id can never be written again
  open: async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    fakes.push(fake);
    // the bridge's first connection waits discoveryInterval (500 ms by default): shorten it, as the contract file does
    const spec = `${fake.connectionString.replace(/^esdb:/, 'kurrentdb:')}&discoveryInterval=10`;
    return { store: openKurrentDbStore({ connectionString: spec }), spec };
  },
});

it('loaded only the KurrentDB client package', () => {
  const files = Object.keys(createRequire(import.meta.url).cache);
  expect(files.some((f) => f.includes('/node_modules/@kurrent/kurrentdb-client/'))).toBe(true);
  expect(files.some((f) => f.includes('/node_modules/@eventstore/db-client/'))).toBe(false);
});
