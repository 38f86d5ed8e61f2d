/**
 * The protocol fake's own behaviour, through the real client with no adapter in between, in each advertised mode.
 * These pin down what the fake claims to model (expected revisions, id-based idempotency, not-found reads,
 * subscriptions), so the adapter's contract runs are not passing on a fake that merely agrees with the adapter.
 */
import { EventStoreDBClient, jsonEvent, NO_STREAM, START, StreamNotFoundError, WrongExpectedVersionError, ANY } from '@eventstore/db-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidAt } from '../../../../testing/log-builder.js';
import { rejection } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from './fake/esdb-fake.js';

const event = (n: number) => jsonEvent({ id: uuidAt(n), type: 'test', data: { n } });


const modes: [FakeFeatures, 'Append' | 'BatchAppend'][] = [
  ['batch-append', 'BatchAppend'],
  ['append-only', 'Append'],
  ['unimplemented', 'Append'],
];

describe.each(modes)('eventstoredb protocol fake, features %s (raw client)', (features, rpc) => {
  const fake = new FakeEsdb({ features });
  let client: EventStoreDBClient;
  let n = 0;
  const streamName = (): string => `fake-${features}-${n++}`;
  beforeAll(async () => {
    await fake.start();
    client = EventStoreDBClient.connectionString(fake.connectionString);
  });
  afterAll(async () => {
    await client.dispose();
    await fake.stop();
  });

  it(`appends over ${rpc}, revisions from 0`, async () => {
    const s = streamName();
    const before = fake.calls;
    const r = await client.appendToStream(s, [event(1), event(2)], { expectedRevision: NO_STREAM });
    expect(r.nextExpectedRevision).toBe(1n);
    expect(fake.calls[rpc]).toBeGreaterThanOrEqual(before[rpc] + (rpc === 'Append' ? 1 : 0));
    expect(fake.appendedVia[rpc]).toBeGreaterThanOrEqual(2);
    expect(fake.appendedVia[rpc === 'Append' ? 'BatchAppend' : 'Append']).toBe(0);
    const read = [];
    for await (const e of client.readStream(s)) read.push(e.event);
    expect(read.map((e) => [e?.revision, e?.id, e?.type, e?.data])).toEqual([
      [0n, uuidAt(1), 'test', { n: 1 }],
      [1n, uuidAt(2), 'test', { n: 2 }],
    ]);
    expect(read[0]!.created.getTime()).toBeGreaterThan(0);
  });

  it('reports wrong expected versions with the current revision', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(10), event(11), event(12)], { expectedRevision: NO_STREAM });
    const stale = (await rejection(() => client.appendToStream(s, [event(13)], { expectedRevision: 0n }))) as WrongExpectedVersionError;
    expect(stale).toBeInstanceOf(WrongExpectedVersionError);
    expect(stale.expectedVersion).toBe(0n);
    expect(stale.actualVersion).toBe(2n);
    const missing = (await rejection(() => client.appendToStream(streamName(), [event(14)], { expectedRevision: 'stream_exists' }))) as WrongExpectedVersionError;
    expect(missing.actualVersion).toBe('no_stream');
  });

  it('re-appending the same ids at the same place is an idempotent success (one copy kept)', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(20), event(21)], { expectedRevision: NO_STREAM });
    const again = await client.appendToStream(s, [event(20), event(21)], { expectedRevision: NO_STREAM });
    expect(again.nextExpectedRevision).toBe(1n);
    const anyAgain = await client.appendToStream(s, [event(20), event(21)], { expectedRevision: ANY });
    expect(anyAgain.nextExpectedRevision).toBe(1n);
    expect(fake.storedIds(s)).toEqual([uuidAt(20), uuidAt(21)]);
  });

  it('a batch matching stored ids only in part is a wrong expected version', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(30), event(31)], { expectedRevision: NO_STREAM });
    expect(await rejection(() => client.appendToStream(s, [event(30), event(39)], { expectedRevision: NO_STREAM }))).toBeInstanceOf(WrongExpectedVersionError);
    expect(await rejection(() => client.appendToStream(s, [event(31), event(30)], { expectedRevision: ANY }))).toBeInstanceOf(WrongExpectedVersionError);
    expect(fake.storedIds(s)).toEqual([uuidAt(30), uuidAt(31)]);
  });

  it('as modelled on the server, writes a duplicate id when the first id of the batch is new (the adapter guards this)', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(40)], { expectedRevision: NO_STREAM });
    await client.appendToStream(s, [event(41), event(40)], { expectedRevision: ANY });
    expect(fake.storedIds(s)).toEqual([uuidAt(40), uuidAt(41), uuidAt(40)]);
  });

  it('a read of an absent stream fails with StreamNotFoundError', async () => {
    const read = async () => {
      for await (const _ of client.readStream(streamName())) void _;
    };
    expect(await rejection(() => read())).toBeInstanceOf(StreamNotFoundError);
  });

  it('a stream subscription confirms, catches up, reports caughtUp, then goes live', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(50), event(51)], { expectedRevision: NO_STREAM });
    const sub = client.subscribeToStream(s, { fromRevision: START });
    const seen: string[] = [];
    const caughtUp = new Promise<void>((resolve) => sub.once('caughtUp', () => resolve()));
    const confirmed = new Promise<void>((resolve) => sub.once('confirmation', () => resolve()));
    const it = sub[Symbol.asyncIterator]();
    seen.push((await it.next()).value.event.id, (await it.next()).value.event.id);
    await confirmed;
    await caughtUp;
    await client.appendToStream(s, [event(52)], { expectedRevision: 1n });
    seen.push((await it.next()).value.event.id);
    expect(seen).toEqual([uuidAt(50), uuidAt(51), uuidAt(52)]);
    await sub.unsubscribe();
  });
});
