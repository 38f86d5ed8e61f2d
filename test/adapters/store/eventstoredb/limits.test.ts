/**
 * Append size limits: the protocol fake refuses requests (and, imitating 25.1, events) over its limits with each
 * RPC's own error shape; the adapter splits a batch to fit, says where atomicity ends, and refuses one oversized
 * event as `event-too-large` with its size and the limit before sending anything.
 */
import { EventStoreDBClient, jsonEvent, MaxAppendSizeExceededError, UnknownError } from '@eventstore/db-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ESDB_SERVER_LIMITS, openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { isEventTooLargeError, isUnknownOutcomeError, type EventTooLargeError } from '../../../../runtime/ports/store-errors.js';
import { collect, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from './fake/esdb-fake.js';

const KiB = 1024;
const big = (id: string, bytes: number): NewEvent => ({ id, type: 'test/big', time: 1, data: { pad: 'x'.repeat(bytes) } });

const fakes: FakeEsdb[] = [];
const stores: EventStoreDbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const f of fakes.splice(0)) await f.stop();
});
const startFake = async (options: ConstructorParameters<typeof FakeEsdb>[0]): Promise<FakeEsdb> => {
  const fake = new FakeEsdb(options);
  await fake.start();
  fakes.push(fake);
  return fake;
};

describe.each(['batch-append', 'append-only'] as FakeFeatures[])('eventstoredb limits — protocol fake (%s)', (features) => {
  it('the fake refuses a request over 1 MiB (data + metadata + 2 × type) with the maximum-append-size error', async () => {
    const fake = await startFake({ features, profile: '23.10' });
    const client = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      const half = (n: number) => jsonEvent({ type: 'tt', data: { pad: 'y'.repeat(n) } });
      // two events that fit alone, not together
      const e = await rejection(() => client.appendToStream(uniqueStream(), [half(600 * KiB), half(600 * KiB)]));
      expect(e).toBeInstanceOf(MaxAppendSizeExceededError);
      expect((e as MaxAppendSizeExceededError).maxAppendSize).toBe(1024 * KiB);
      expect(fake.limitRefusals).toBe(1);
    } finally {
      await client.dispose();
    }
  });

  it('25.1 profile: an event over the event limit gets an error 6.2.1 does not know; the adapter maps it to event-too-large when it can', async () => {
    const fake = await startFake({ features, profile: '25.1', maxEventSize: 100 * KiB });
    const client = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      const e = await rejection(() => client.appendToStream(uniqueStream(), [jsonEvent({ type: 'tt', data: { pad: 'y'.repeat(200 * KiB) } })]));
      expect(e).toBeInstanceOf(UnknownError);
    } finally {
      await client.dispose();
    }
    // configured for 25.1's defaults, the adapter sends the event; the server's lower setting refuses it
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append', serverLimits: ESDB_SERVER_LIMITS.from25_1, maxEventBytes: 1024 * KiB });
    stores.push(store);
    const s = uniqueStream();
    const refused = await rejection(() => store.append(s, [big('a', 200 * KiB)], 'no_stream'));
    expect(isUnknownOutcomeError(refused)).toBe(features === 'batch-append'); // BatchAppend: only an unrecognized detail
    if (features === 'append-only') expect((refused as { code: string }).code).toBe('event-too-large');
    expect(await collect(() => store.read(s))).toEqual([]);
  });

  it('the adapter splits a batch over the request limit into appends that fit, in order', async () => {
    const fake = await startFake({ features, profile: '23.10' });
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append' });
    stores.push(store);
    const s = uniqueStream();
    const batch = ['a', 'b', 'c', 'd', 'e'].map((id) => big(id, 300 * KiB));
    const r = await store.append(s, batch, 'no_stream');
    expect(r.nextExpectedRevision).toBe(4n);
    expect(fake.appendSizes).toEqual([3, 2]);
    expect(fake.limitRefusals).toBe(0);
    expect((await collect(() => store.read(s))).map((e) => e.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    // a retry of the whole batch is still an idempotent no-op
    expect(await store.append(s, batch, 'no_stream')).toEqual(r);
  });

  it('atomicity ends at a chunk boundary: a failure after the first chunk is unknown-outcome, whole chunks stored', async () => {
    const fake = await startFake({ features, profile: '23.10' });
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append' });
    stores.push(store);
    const s = uniqueStream();
    fake.injectAppendFaults(null, 'break-without-commit');
    const e = await rejection(() => store.append(s, ['a', 'b', 'c', 'd'].map((id) => big(id, 400 * KiB)), 'no_stream'));
    expect(isUnknownOutcomeError(e)).toBe(true);
    expect((e as Error).message).toContain('the first 2 events were stored');
    expect((await collect(() => store.read(s))).map((x) => x.id)).toEqual(['a', 'b']);
  });

  it('one event over the limit is refused as event-too-large with its size and the limit, before anything is sent', async () => {
    const fake = await startFake({ features, profile: '23.10' });
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append', maxEventBytes: 4 * 1024 * KiB });
    stores.push(store);
    const e = await rejection(() => store.append(uniqueStream(), [big('ok', 10), big('huge', 1100 * KiB)], 'no_stream'));
    expect(isEventTooLargeError(e)).toBe(true);
    expect(e as EventTooLargeError).toMatchObject({ index: 1, limit: 1024 * KiB - 512 }) // the limit the store exposes (maxEventSize) is the one it enforces;
    expect((e as EventTooLargeError).bytes).toBeGreaterThan(1100 * KiB);
    expect(fake.appendSizes).toEqual([]);
    expect(fake.limitRefusals).toBe(0);
    expect(store.maxEventSize).toBe(1024 * KiB - 512);
  });
});
