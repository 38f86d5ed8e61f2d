/**
 * Clusters (protocol fake playing a follower): appends require the leader, a follower answers NotLeader with the
 * leader's address (closing the whole BatchAppend stream, as the server does), and the adapter reports a typed,
 * retryable `not-leader` error carrying that address. Nothing is written; the retry lands once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import { isInvalidEventError, isNotLeaderError, type NotLeaderError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb, type FakeFeatures } from './fake/esdb-fake.js';

const fakes: FakeEsdb[] = [];
const stores: EventStoreDbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const f of fakes.splice(0)) await f.stop();
});

describe.each(['batch-append', 'append-only'] as FakeFeatures[])('eventstoredb on a cluster follower — protocol fake (%s)', (features) => {
  it('appends require the leader; NotLeader is a typed error with the leader address; the retry after the switch lands once', async () => {
    const fake = new FakeEsdb({ features });
    await fake.start();
    fakes.push(fake);
    const store = openEventStoreDbStore({ connectionString: fake.connectionString, appendRpc: features === 'batch-append' ? 'batch-append' : 'append' });
    stores.push(store);
    const s = uniqueStream();
    await store.append(s, [ev('a')], 'no_stream');
    expect(fake.leaderChecks.requiresLeader).toBe(1);
    fake.becomeFollower({ host: '127.0.0.1', port: fake.port });
    const e = await rejection(() => store.append(s, [ev('b')], 0n));
    expect(isNotLeaderError(e)).toBe(true);
    expect((e as NotLeaderError).leader).toEqual({ host: '127.0.0.1', port: fake.port });
    expect(fake.leaderChecks.refused).toBe(1);
    fake.becomeLeader();
    await store.append(s, [ev('b')], 0n);
    expect((await collect(() => store.read(s))).map((x) => x.id)).toEqual(['a', 'b']);
  });
});

describe('eventstoredb event types', () => {
  it('a steerlog event type starting with $ is refused at append, not stored to vanish from $all', async () => {
    const fake = new FakeEsdb({ features: 'batch-append' });
    await fake.start();
    fakes.push(fake);
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
    stores.push(store);
    const s = uniqueStream();
    const e = await rejection(() => store.append(s, [ev('a'), { ...ev('b'), type: '$metadata' }], 'no_stream'));
    expect(isInvalidEventError(e)).toBe(true);
    expect(e).toMatchObject({ index: 1 });
    expect(await collect(() => store.read(s))).toEqual([]);
  });
});
