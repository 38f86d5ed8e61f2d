/**
 * The shared EventStore contract against the EventStoreDB adapter, with the real `@eventstore/db-client`:
 * - twice against the in-process *protocol fake* (test/adapters/store/eventstoredb/fake), once with BatchAppend
 *   advertised and once with Append only, checking which RPC carried the appends;
 * - once against a real server, only when ESDB_URL is set (otherwise reported as skipped).
 * The fake is not EventStoreDB: see docs/store-eventstoredb.md for what it does not model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore } from '../../adapters/store/eventstoredb/index.js';
import { METADATA_ALLOWANCE } from '../../adapters/store/eventstoredb/eventstoredb-event-store.js';
import { FakeEsdb, type FakeFeatures } from '../adapters/store/eventstoredb/fake/esdb-fake.js';
import { describeEventStoreContract } from './event-store.contract.js';

/**
 * Events in the big-stream test against the fake: 5 000 by default, which pages through the client's reads many
 * times. The 100 000-event read is the slowest test of the suite on the fake (12 s idle, over 100 s on a loaded
 * 2-core machine) and checks nothing the 5 000 do not, short of a real server: the suite keeps one 100 000-event big
 * stream per real store (JSONL with fsync, PostgreSQL, and the real-server suite here when ESDB_URL is set).
 * `ESDB_FAKE_BIG_STREAM_EVENTS=100000` runs the full size against the fake.
 */
const bigStreamEvents = (fallback: number): number => Number(process.env.ESDB_FAKE_BIG_STREAM_EVENTS ?? fallback);

const fakeSuite = (name: string, features: FakeFeatures, path: 'Append' | 'BatchAppend', bigStream: number): void => {
  const FAKE_BIG_STREAM_EVENTS = bigStreamEvents(bigStream);
  describe(name, () => {
    const fake = new FakeEsdb({ features });
    beforeAll(() => fake.start());
    afterAll(() => fake.stop());

    // steerlog appends over Append by default; the BatchAppend suite asks for BatchAppend explicitly.
    const appendRpc = path === 'BatchAppend' ? ('batch-append' as const) : ('append' as const);
    describeEventStoreContract(name, {
      create: async () => openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc }),
      openPeer: async () => openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc }),
      bigStreamEvents: FAKE_BIG_STREAM_EVENTS,
      // the server's 1 MiB per event, less what steerlog's own metadata (chain hash, provenance) may take
      maxEventBytes: 1024 * 1024 - METADATA_ALLOWANCE,
      // global reads are not filtered by partition (the server's $all has no stream hash): readers filter
      partitionedReads: false,
      // the deletion contract runs too (deletion defaults to true): the adapter tombstones (see docs/store-eventstoredb.md)
    });

    it(`carried every append over ${path} only`, () => {
      const other = path === 'Append' ? 'BatchAppend' : 'Append';
      expect(fake.calls[path]).toBeGreaterThan(0);
      expect(fake.appendedVia[path]).toBeGreaterThan(FAKE_BIG_STREAM_EVENTS);
      expect(fake.calls[other]).toBe(0);
      expect(fake.appendedVia[other]).toBe(0);
      // the client asks for the server's methods only when it may use BatchAppend (no per-call credentials)
      if (path === 'BatchAppend') expect(fake.calls.GetSupportedMethods).toBeGreaterThan(0);
      // StreamDeletion went through Tombstone (hard delete) only, never the soft Delete
      expect(fake.calls.Tombstone).toBeGreaterThan(0);
      expect(fake.calls.Delete).toBe(0);
    });
  });
};

fakeSuite('eventstoredb — protocol fake (BatchAppend)', 'batch-append', 'BatchAppend', 5_000);
fakeSuite('eventstoredb — protocol fake (Append)', 'append-only', 'Append', 5_000);

const ESDB_URL = process.env.ESDB_URL;
describe.skipIf(!ESDB_URL)('eventstoredb — real server', () => {
  describeEventStoreContract('eventstoredb — real server', {
    create: async () => openEventStoreDbStore({ connectionString: ESDB_URL! }),
    openPeer: async () => openEventStoreDbStore({ connectionString: ESDB_URL! }),
    maxEventBytes: 1024 * 1024 - METADATA_ALLOWANCE,
  });
});
