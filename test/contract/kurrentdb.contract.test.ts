/**
 * The shared EventStore contract against the KurrentDB store (`kurrentdb://`): the same adapter as `esdb://`, with
 * the real `@kurrent/kurrentdb-client` 1.3.1 (its reads through the client's native bridge, `@kurrent/bridge`):
 * - twice against the in-process *protocol fake* (test/adapters/store/eventstoredb/fake, hosting the KurrentDB
 *   client's own stubs: see kurrent-stubs.ts), once with BatchAppend advertised and once with Append only;
 * - once against a real server, only when KURRENTDB_URL is set (otherwise reported as skipped).
 * This file must never load `@eventstore/db-client` (both clients register the same protobuf names globally); the
 * first test checks that it did not. vitest runs each test file in its own child process (pool 'forks').
 * The fake is not KurrentDB: see docs/store-eventstoredb.md for what it does not model.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openKurrentDbStore } from '../../adapters/store/kurrentdb/index.js';
import { METADATA_ALLOWANCE } from '../../adapters/store/eventstoredb/grpc-event-store.js';
import { FakeEsdb, type FakeFeatures } from '../adapters/store/eventstoredb/fake/esdb-fake.js';
import { STUBS_PACKAGE } from '../adapters/store/eventstoredb/fake/stubs.js';
import { describeEventStoreContract } from './event-store.contract.js';

vi.mock('../adapters/store/eventstoredb/fake/stubs.js', () => import('../adapters/store/kurrentdb/kurrent-stubs.js'));

/** Events in the big-stream test against the fake, as in eventstoredb.contract.test.ts (same variable). */
const bigStreamEvents = (fallback: number): number => Number(process.env.ESDB_FAKE_BIG_STREAM_EVENTS ?? fallback);

/** The client packages loaded (through require) into this process. */
const loadedClientPackages = (): string[] => {
  const cache = createRequire(import.meta.url).cache;
  const packages = new Set<string>();
  for (const file of Object.keys(cache)) {
    const m = /\/node_modules\/(@eventstore\/db-client|@kurrent\/kurrentdb-client)\//.exec(file);
    if (m) packages.add(m[1]!);
  }
  return [...packages].sort();
};

describe('kurrentdb — one client package per process', () => {
  it('the fake speaks through the KurrentDB client stubs, and @eventstore/db-client is not loaded', () => {
    expect(STUBS_PACKAGE).toBe('@kurrent/kurrentdb-client');
    expect(loadedClientPackages()).toEqual(['@kurrent/kurrentdb-client']);
  });
});

const fakeSuite = (name: string, features: FakeFeatures, path: 'Append' | 'BatchAppend', bigStream: number): void => {
  const FAKE_BIG_STREAM_EVENTS = bigStreamEvents(bigStream);
  describe(name, () => {
    const fake = new FakeEsdb({ features });
    // The client's native bridge waits `discoveryInterval` (500 ms by default) before its first connection: each store
    // here opens its own client, so shorten it (see docs/store-eventstoredb.md).
    const url = (): string => `${fake.connectionString.replace(/^esdb:/, 'kurrentdb:')}&discoveryInterval=10`;
    beforeAll(() => fake.start());
    afterAll(() => fake.stop());

    const appendRpc = path === 'BatchAppend' ? ('batch-append' as const) : ('append' as const);
    describeEventStoreContract(name, {
      create: async () => openKurrentDbStore({ connectionString: url(), appendRpc }),
      openPeer: async () => openKurrentDbStore({ connectionString: url(), appendRpc }),
      bigStreamEvents: FAKE_BIG_STREAM_EVENTS,
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
      if (path === 'BatchAppend') expect(fake.calls.GetSupportedMethods).toBeGreaterThan(0);
      // StreamDeletion went through Tombstone (hard delete) only, never the soft Delete
      expect(fake.calls.Tombstone).toBeGreaterThan(0);
      expect(fake.calls.Delete).toBe(0);
      expect(loadedClientPackages()).toEqual(['@kurrent/kurrentdb-client']);
    });
  });
};

fakeSuite('kurrentdb — protocol fake (BatchAppend)', 'batch-append', 'BatchAppend', 1_000);
fakeSuite('kurrentdb — protocol fake (Append)', 'append-only', 'Append', 1_000);

const KURRENTDB_URL = process.env.KURRENTDB_URL;
describe.skipIf(!KURRENTDB_URL)('kurrentdb — real server', () => {
  describeEventStoreContract('kurrentdb — real server', {
    create: async () => openKurrentDbStore({ connectionString: KURRENTDB_URL! }),
    openPeer: async () => openKurrentDbStore({ connectionString: KURRENTDB_URL! }),
    maxEventBytes: 1024 * 1024 - METADATA_ALLOWANCE,
  });
});
