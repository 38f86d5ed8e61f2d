import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeEsdb } from '../../test/adapters/store/eventstoredb/fake/esdb-fake.js';
import { kurrentDbExample } from './kurrentdb-usage.js';

// Its own file, so its own process: the fake speaks through the KurrentDB client's stubs (see kurrent-stubs.ts).
vi.mock('../../test/adapters/store/eventstoredb/fake/stubs.js', () => import('../../test/adapters/store/kurrentdb/kurrent-stubs.js'));

describe('docs/store-eventstoredb.md, KurrentDB client (against the protocol fake)', () => {
  const fake = new FakeEsdb({ features: 'batch-append' });
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());
  it('opens a store from a kurrentdb:// connection string and from a client; both see the same stream', async () => {
    const url = `${fake.connectionString.replace(/^esdb:/, 'kurrentdb:')}&discoveryInterval=10`;
    await expect(kurrentDbExample(url)).resolves.toBe(0n);
  });
});
