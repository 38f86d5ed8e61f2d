/**
 * The protocol fake's `Streams.Tombstone` and `Streams.Delete`, through the real `@eventstore/db-client` with no
 * adapter in between, in both append modes: what the fake claims to model of a deleted stream (as EventStoreDB
 * documents it), so the adapter's deletion contract does not pass on a fake that merely agrees with the adapter.
 */
import { EventStoreDBClient, jsonEvent, NO_STREAM, START, StreamDeletedError, StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidAt } from '../../../../testing/log-builder.js';
import { rejection } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from './fake/esdb-fake.js';

const event = (n: number) => jsonEvent({ id: uuidAt(n), type: 'test', data: { n } });


describe.each<[FakeFeatures, 'Append' | 'BatchAppend']>([
  ['batch-append', 'BatchAppend'],
  ['append-only', 'Append'],
])('eventstoredb protocol fake, features %s: deleting streams (raw client)', (features, rpc) => {
  const fake = new FakeEsdb({ features });
  let client: EventStoreDBClient;
  let n = 0;
  const streamName = (): string => `gone-${features}-${n++}`;
  const readIds = async (s: string): Promise<string[]> => {
    const ids: string[] = [];
    for await (const e of client.readStream(s)) ids.push(e.event!.id);
    return ids;
  };
  const allOf = async (s: string): Promise<[string, bigint][]> => {
    const out: [string, bigint][] = [];
    for await (const e of client.readAll({ fromPosition: START })) if (e.event?.streamId === s) out.push([e.event.type, e.event.revision]);
    return out;
  };
  beforeAll(async () => {
    await fake.start();
    client = EventStoreDBClient.connectionString(fake.connectionString);
  });
  afterAll(async () => {
    await client.dispose();
    await fake.stop();
  });

  it(`a tombstoned stream reads as deleted, refuses appends over ${rpc} and a second tombstone; $all keeps its events, then $streamDeleted`, async () => {
    const s = streamName();
    await client.appendToStream(s, [event(1), event(2)], { expectedRevision: NO_STREAM });
    const result = await client.tombstoneStream(s, { expectedRevision: 1n });
    expect(result.position!.commit).toBeGreaterThan(0n);
    expect(fake.calls.Tombstone).toBeGreaterThan(0);

    const read = await rejection(() => readIds(s));
    expect(read).toBeInstanceOf(StreamDeletedError);
    expect((read as StreamDeletedError).streamName).toBe(s);
    expect(await rejection(() => client.appendToStream(s, [event(3)]))).toBeInstanceOf(StreamDeletedError);
    expect(await rejection(() => client.appendToStream(s, [event(4)], { expectedRevision: NO_STREAM }))).toBeInstanceOf(StreamDeletedError);
    // whatever the expected revision: the right one, a wrong one
    expect(await rejection(() => client.tombstoneStream(s, { expectedRevision: 1n }))).toBeInstanceOf(StreamDeletedError);
    expect(await rejection(() => client.tombstoneStream(s, { expectedRevision: 7n }))).toBeInstanceOf(StreamDeletedError);
    // $all bypasses the index: the events stay until a scavenge (the fake never scavenges), the tombstone follows them
    expect(await allOf(s)).toEqual([
      ['test', 0n],
      ['test', 1n],
      ['$streamDeleted', (1n << 63n) - 1n],
    ]);
  });

  it('a tombstone with a stale or absent expected revision is a wrong expected version with the actual revision; nothing changes', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(1), event(2), event(3)], { expectedRevision: NO_STREAM });
    const stale = await rejection(() => client.tombstoneStream(s, { expectedRevision: 1n }));
    expect(stale).toBeInstanceOf(WrongExpectedVersionError);
    expect((stale as WrongExpectedVersionError).actualVersion).toBe(2n);
    expect((stale as WrongExpectedVersionError).expectedVersion).toBe(1n);
    expect(await readIds(s)).toEqual([uuidAt(1), uuidAt(2), uuidAt(3)]);
    const absent = await rejection(() => client.tombstoneStream(streamName(), { expectedRevision: 0n }));
    expect(absent).toBeInstanceOf(WrongExpectedVersionError);
    expect((absent as WrongExpectedVersionError).actualVersion).toBe(-1n);
  });

  it('a soft delete (Delete) hides the stream but does not retire it: the next append re-creates it, numbering on', async () => {
    const s = streamName();
    await client.appendToStream(s, [event(1), event(2)], { expectedRevision: NO_STREAM });
    await client.deleteStream(s, { expectedRevision: 1n });
    expect(await rejection(() => readIds(s))).toBeInstanceOf(StreamNotFoundError);
    const again = await client.appendToStream(s, [event(5)], { expectedRevision: NO_STREAM });
    expect(again.nextExpectedRevision).toBe(2n);
    expect(await readIds(s)).toEqual([uuidAt(5)]);
    // why steerlog tombstones: after a soft delete the id can be written again
    expect(fake.calls.Delete).toBe(1);
  });
});
