/**
 * EventStoreDB adapter specifics, against the protocol fake: which RPC path carries appends, event ids on the
 * wire, idempotency beyond what the server checks, system events, connection strings, and lifecycle.
 */
import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  clientFromConnectionString,
  DEFAULT_STREAM_PREFIX,
  openEventStoreDbStore,
  type EventStoreDbEventStore,
} from '../../../../adapters/store/eventstoredb/index.js';
import { uuidV5 } from '../../../../adapters/store/eventstoredb/mapping.js';
import type { NewEvent, SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import {
  isConcurrencyError,
  isDuplicateEventIdError,
  isInvalidStreamIdError,
  isStoreClosedError,
  isStoreError,
} from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from './fake/esdb-fake.js';


const evs = (prefix: string, n: number): NewEvent[] => Array.from({ length: n }, (_, i) => ev(`${prefix}-${i}`));

describe('eventstoredb adapter — RPC path', () => {
  const cases: [FakeFeatures, 'append' | 'batch-append', 'Append' | 'BatchAppend'][] = [
    ['batch-append', 'append', 'Append'], // the default: Append even where BatchAppend is offered
    ['batch-append', 'batch-append', 'BatchAppend'],
    ['append-only', 'batch-append', 'Append'],
    ['unimplemented', 'batch-append', 'Append'],
  ];
  it.each(cases)('features %s, appendRpc %s: appends go over %s', async (features, appendRpc, rpc) => {
    const fake = new FakeEsdb({ features });
    await fake.start();
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc });
    try {
      const s = uniqueStream();
      await store.append(s, evs('a', 3), 'no_stream');
      await store.append(s, [ev('b')], 2n);
      expect(fake.appendedVia[rpc]).toBe(4);
      expect(fake.appendedVia[rpc === 'Append' ? 'BatchAppend' : 'Append']).toBe(0);
      expect(fake.calls[rpc === 'Append' ? 'BatchAppend' : 'Append']).toBe(0);
      // the client asks which methods the server has only when it may use BatchAppend
      expect(fake.calls.GetSupportedMethods).toBe(features === 'unimplemented' || appendRpc === 'append' ? 0 : 1);
    } finally {
      await store.close();
      await fake.stop();
    }
  });
});

describe.each(['batch-append', 'append-only'] as const)('eventstoredb adapter on the protocol fake (%s)', (features) => {
  const fake = new FakeEsdb({ features });
  let store: EventStoreDbEventStore;
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());
  afterEach(async () => {
    await store?.close();
  });
  const open = (): EventStoreDbEventStore => (store = openEventStoreDbStore({ connectionString: fake.connectionString }));

  it('sends deterministic UUIDs for non-UUID ids, UUID ids unchanged, and reads the port ids back', async () => {
    open();
    const s = uniqueStream();
    const u = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    await store.append(s, [ev('msg-1'), ev(u)], 'no_stream');
    expect(fake.storedIds(DEFAULT_STREAM_PREFIX + s)).toEqual([uuidV5('msg-1'), u]);
    expect((await collect(() => store.read(s))).map((e) => e.id)).toEqual(['msg-1', u]);
  });

  it('a retry with another expected revision is still an idempotent no-op', async () => {
    open();
    const s = uniqueStream();
    const first = await store.append(s, evs('a', 3), 'no_stream');
    for (const expected of ['stream_exists', 'any', 0n, 7n] as const) {
      const again = await store.append(s, evs('a', 3), expected);
      expect(again).toEqual(first);
    }
    expect(fake.storedIds(DEFAULT_STREAM_PREFIX + s)).toHaveLength(3);
  });

  it('the append result position is the position of the batch last event in readAll', async () => {
    open();
    const s = uniqueStream();
    const r = await store.append(s, evs('p', 2), 'no_stream');
    const all = (await collect(() => store.readAll())).filter((e) => e.stream === s);
    expect(all.at(-1)!.position).toBe(r.position);
  });

  it('refuses a batch whose first id is new but a later one is stored (the server would write it)', async () => {
    open();
    const s = uniqueStream();
    await store.append(s, [ev('a')], 'no_stream');
    const e = await rejection(() => store.append(s, [ev('b'), ev('a')], 'any'));
    expect(isDuplicateEventIdError(e)).toBe(true);
    const e2 = await rejection(() => store.append(s, [ev('b'), ev('a')], 0n));
    expect(isDuplicateEventIdError(e2)).toBe(true);
    expect(fake.storedIds(DEFAULT_STREAM_PREFIX + s)).toEqual([uuidV5('a')]);
  });

  it('sees ids written by another store instance (its id index refreshes from the server)', async () => {
    open();
    const peer = openEventStoreDbStore({ connectionString: fake.connectionString });
    try {
      const s = uniqueStream();
      await store.append(s, [ev('a')], 'no_stream');
      await peer.append(s, [ev('b'), ev('c')], 0n);
      expect(isDuplicateEventIdError(await rejection(() => store.append(s, [ev('c'), ev('d')], 'any')))).toBe(true);
      expect(await store.append(s, [ev('b'), ev('c')], 0n)).toMatchObject({ nextExpectedRevision: 2n });
      const c = await rejection(() => store.append(s, [ev('d')], 0n));
      expect(isConcurrencyError(c)).toBe(true);
      expect(c).toMatchObject({ expected: 0n, actual: 2n });
    } finally {
      await peer.close();
    }
  });

  it('two stores racing the same batch: both succeed, one copy is stored', async () => {
    open();
    const peer = openEventStoreDbStore({ connectionString: fake.connectionString });
    try {
      const s = uniqueStream();
      const [a, b] = await Promise.all([store.append(s, evs('r', 2), 'no_stream'), peer.append(s, evs('r', 2), 'no_stream')]);
      expect(a.nextExpectedRevision).toBe(1n);
      expect(b.nextExpectedRevision).toBe(1n);
      expect(fake.storedIds(DEFAULT_STREAM_PREFIX + s)).toHaveLength(2);
    } finally {
      await peer.close();
    }
  });

  it('refuses $-prefixed stream ids as invalid', async () => {
    open();
    expect(isInvalidStreamIdError(await rejection(() => store.append('$stats', [ev('a')], 'any')))).toBe(true);
    expect(isInvalidStreamIdError(await rejection(() => collect(() => store.read('$all'))))).toBe(true);
  });

  it('readAll and subscribeAll hide system events', async () => {
    open();
    const s = uniqueStream();
    fake.writeSystemEvent('$stats-127.0.0.1:2113', '$statsCollected');
    await store.append(s, [ev('visible')], 'no_stream');
    const all = await collect(() => store.readAll());
    expect(all.some((e) => e.stream.startsWith('$') || e.type.startsWith('$'))).toBe(false);
    expect(all.some((e) => e.id === 'visible')).toBe(true);
    const ac = new AbortController();
    const it = store.subscribeAll({ signal: ac.signal })[Symbol.asyncIterator]();
    const got: SubscriptionMessage[] = [];
    while (!got.some((m) => m.kind === 'caught-up')) got.push((await it.next()).value as SubscriptionMessage);
    fake.writeSystemEvent('$stats-127.0.0.1:2113', '$statsCollected');
    await store.append(s, [ev('live')], 0n);
    const live = (await it.next()).value as SubscriptionMessage;
    expect(live.kind === 'event' && live.event.id).toBe('live');
    expect(got.some((m) => m.kind === 'event' && m.event.stream.startsWith('$'))).toBe(false);
    ac.abort();
    await it.return?.();
  });

  it('places caught-up after a long catch-up, exactly after the last stored event', async () => {
    open();
    const s = uniqueStream();
    const n = 3_000;
    for (let i = 0; i < n; i += 500) await store.append(s, evs(`h${i}`, 500), i === 0 ? 'no_stream' : BigInt(i - 1));
    const ac = new AbortController();
    const it = store.subscribe(s, { signal: ac.signal })[Symbol.asyncIterator]();
    const kinds: string[] = [];
    for (let i = 0; i <= n; i++) kinds.push(((await it.next()).value as SubscriptionMessage).kind);
    expect(kinds.indexOf('caught-up')).toBe(n);
    expect(kinds.filter((k) => k === 'caught-up')).toHaveLength(1);
    ac.abort();
    await it.return?.();
  });

  it('places caught-up right when the consumer pauses until the fake has sent caught_up', async () => {
    open();
    const s = uniqueStream();
    const n = 100; // small enough for the whole catch-up and caught_up to sit in gRPC buffers unconsumed
    await store.append(s, evs('q', n), 'no_stream');
    const ac = new AbortController();
    const it = store.subscribe(s, { signal: ac.signal })[Symbol.asyncIterator]();
    const before = fake.caughtUpCount;
    const kinds: string[] = [((await it.next()).value as SubscriptionMessage).kind];
    // Stop consuming until the fake has sent everything, caught_up included, then drain.
    await fake.caughtUpSent(before + 1);
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    for (let i = 1; i <= n; i++) kinds.push(((await it.next()).value as SubscriptionMessage).kind);
    expect(kinds.indexOf('caught-up')).toBe(n);
    ac.abort();
    await it.return?.();
  });

  it('stopping a read or a subscription early cancels the server call', async () => {
    open();
    const s = uniqueStream();
    await store.append(s, evs('c', 2_000), 'no_stream');
    await fake.readsClosed();
    expect(await collect(() => store.read(s, { maxCount: 5 }))).toHaveLength(5);
    const all = await collect(() => store.readAll({ maxCount: 3 }));
    expect(all).toHaveLength(3);
    for await (const e of store.read(s)) {
      if (e.revision === 10n) break;
    }
    const ac = new AbortController();
    const it = store.subscribe(s, { signal: ac.signal })[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    await it.return?.();
    await fake.readsClosed();
    expect(fake.openReads).toBe(0);
  });

  it('close ends live subscriptions and refuses later calls', async () => {
    open();
    const s = uniqueStream();
    const it = store.subscribe(s)[Symbol.asyncIterator]();
    expect(((await it.next()).value as SubscriptionMessage).kind).toBe('caught-up');
    const pending = it.next();
    await store.close();
    expect((await pending).done).toBe(true);
    expect(isStoreClosedError(await rejection(() => store.append(s, [ev('a')], 'any')))).toBe(true);
    expect(isStoreClosedError(await rejection(() => store.revision(s)))).toBe(true);
  });

  it('a store on a caller-owned client leaves the client usable after close', async () => {
    const client = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      store = openEventStoreDbStore({ client });
      const s = uniqueStream();
      await store.append(s, [ev('a')], 'no_stream');
      await store.close();
      const r = await client.appendToStream(DEFAULT_STREAM_PREFIX + s, jsonEvent({ type: 't', data: {} }), { expectedRevision: 0n });
      expect(r.nextExpectedRevision).toBe(1n);
    } finally {
      await client.dispose();
    }
  });
});

describe('eventstoredb adapter — connection', () => {
  it('parses esdb:// and esdb+discover:// connection strings', async () => {
    const single = clientFromConnectionString('esdb://127.0.0.1:2113?tls=false');
    expect(single).toBeInstanceOf(EventStoreDBClient);
    await single.dispose();
    const cluster = clientFromConnectionString('esdb+discover://admin:changeit@cluster.example:2113?tls=true&keepAliveInterval=10000');
    expect(cluster).toBeInstanceOf(EventStoreDBClient);
    await cluster.dispose();
  });

  it('refuses other schemes and malformed strings with a TypeError', () => {
    for (const bad of ['http://127.0.0.1:2113', '', 'esdb://', 'esdb://127.0.0.1:notaport', 'esdb://127.0.0.1:2113?tls=maybe', 42 as never]) {
      expect(() => clientFromConnectionString(bad), String(bad)).toThrow(TypeError);
    }
  });

  it('a live subscription fails with a retryable subscription-dropped StoreError when the server goes away', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
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

  it('maps an unreachable server to a store-io StoreError', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    const url = fake.connectionString;
    await fake.stop();
    const store = openEventStoreDbStore({ connectionString: url });
    try {
      const e = await rejection(() => store.append(uniqueStream(), [ev('a')], 'any'));
      expect(isStoreError(e)).toBe(true);
      expect((e as { code: string }).code).toBe('store-io');
    } finally {
      await store.close();
    }
  });
});
