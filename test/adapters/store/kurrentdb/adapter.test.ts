/**
 * KurrentDB store specifics (`kurrentdb://`, `@kurrent/kurrentdb-client` 1.3.1), against the protocol fake speaking
 * through the KurrentDB client's own stubs: connection strings, the store spec, the RPC path of appends, and the
 * errors the client's native read bridge raises. The shared behaviour is in test/contract/kurrentdb.contract.test.ts.
 * Never imports `@eventstore/db-client` (see kurrent-stubs.ts).
 */
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { describe, expect, it, vi } from 'vitest';
import { openStore } from '../../../../adapters/store/open-store.js';
import { KurrentDbEventStore, kurrentClientFromConnectionString, openKurrentDbStore } from '../../../../adapters/store/kurrentdb/index.js';
import type { SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { isConcurrencyError, isStoreError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from '../eventstoredb/fake/esdb-fake.js';

vi.mock('../eventstoredb/fake/stubs.js', () => import('./kurrent-stubs.js'));

/** The fake's address as a kurrentdb:// string; the bridge's first connection waits `discoveryInterval`. */
const kurrentUrl = (fake: FakeEsdb): string => `${fake.connectionString.replace(/^esdb:/, 'kurrentdb:')}&discoveryInterval=10`;

describe('kurrentdb store — connection', () => {
  it('parses kurrentdb:// and kurrentdb+discover:// connection strings', async () => {
    const single = kurrentClientFromConnectionString('kurrentdb://127.0.0.1:2113?tls=false');
    expect(single).toBeInstanceOf(KurrentDBClient);
    await single.dispose();
    const cluster = kurrentClientFromConnectionString('kurrentdb+discover://admin:changeit@cluster.example:2113?tls=true&keepAliveInterval=10000');
    expect(cluster).toBeInstanceOf(KurrentDBClient);
    await cluster.dispose();
  });

  it('refuses other schemes (esdb:// included) and malformed strings with a TypeError', () => {
    for (const bad of ['esdb://127.0.0.1:2113?tls=false', 'http://127.0.0.1:2113', '', 'kurrentdb://', 'kurrentdb://127.0.0.1:notaport', 'kurrentdb://127.0.0.1:2113?tls=maybe', 42 as never]) {
      expect(() => kurrentClientFromConnectionString(bad), String(bad)).toThrow(TypeError);
    }
  });

  it('a kurrentdb:// store spec opens the KurrentDB store, which works against the fake', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const store = await openStore(kurrentUrl(fake));
    try {
      expect(store).toBeInstanceOf(KurrentDbEventStore);
      const s = uniqueStream();
      await store.append(s, [ev('a'), ev('b')], 'no_stream');
      expect((await collect(() => store.read(s))).map((e) => e.id)).toEqual(['a', 'b']);
      // the client's WrongExpectedVersionError says `actualState` (6.x said `actualVersion`): the actual revision survives
      const e = await rejection(() => store.append(s, [ev('c')], 0n));
      expect(isConcurrencyError(e)).toBe(true);
      expect(e).toMatchObject({ actual: 1n });
      expect(fake.calls.Append).toBeGreaterThan(0); // the default path: Append, with placeholder credentials on tls=false
      expect(fake.calls.BatchAppend).toBe(0);
    } finally {
      await store.close();
      await fake.stop();
    }
  });
});

describe('kurrentdb store — RPC path', () => {
  const cases: [FakeFeatures, 'append' | 'batch-append', 'Append' | 'BatchAppend'][] = [
    ['batch-append', 'batch-append', 'BatchAppend'],
    ['unimplemented', 'batch-append', 'Append'],
  ];
  it.each(cases)('features %s, appendRpc %s: appends go over %s', async (features, appendRpc, rpc) => {
    const fake = new FakeEsdb({ features });
    await fake.start();
    const store = openKurrentDbStore({ connectionString: kurrentUrl(fake), appendRpc });
    try {
      const s = uniqueStream();
      await store.append(s, [ev('a')], 'no_stream');
      await store.append(s, [ev('b')], 0n);
      expect(fake.appendedVia[rpc]).toBe(2);
      expect(fake.appendedVia[rpc === 'Append' ? 'BatchAppend' : 'Append']).toBe(0);
    } finally {
      await store.close();
      await fake.stop();
    }
  });
});

describe('kurrentdb store — failures', () => {
  it('maps an unreachable server (reads through the native bridge) to a store-io StoreError', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const url = kurrentUrl(fake);
    await fake.stop();
    const store = openKurrentDbStore({ connectionString: url });
    try {
      const e = await rejection(() => store.append(uniqueStream(), [ev('a')], 'any'));
      expect(isStoreError(e)).toBe(true);
      expect((e as { code: string }).code).toBe('store-io');
      expect((e as Error).message).toContain('KurrentDB');
    } finally {
      await store.close();
    }
  });

  it('a live subscription fails with a retryable subscription-dropped StoreError when the server goes away', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const store = openKurrentDbStore({ connectionString: kurrentUrl(fake) });
    try {
      const it = store.subscribe(uniqueStream())[Symbol.asyncIterator]();
      expect(((await it.next()).value as SubscriptionMessage).kind).toBe('caught-up');
      const pending = it.next();
      await fake.stop();
      const e = await rejection(() => pending);
      expect(isStoreError(e)).toBe(true);
      expect((e as { code: string }).code).toBe('subscription-dropped');
    } finally {
      await store.close();
    }
  });

  it('close() ends a read in progress and the store refuses further calls', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const store = openKurrentDbStore({ connectionString: kurrentUrl(fake) });
    try {
      const s = uniqueStream();
      await store.append(s, Array.from({ length: 50 }, (_, i) => ev(`e${i}`)), 'no_stream');
      const seen: string[] = [];
      for await (const e of store.read(s)) {
        seen.push(e.id);
        if (seen.length === 3) await store.close();
      }
      expect(seen).toEqual(['e0', 'e1', 'e2']);
      await expect(rejection(() => store.append(s, [ev('x')], 'any'))).resolves.toMatchObject({ code: 'store-closed' });
    } finally {
      await store.close();
      await fake.stop();
    }
  });
});
