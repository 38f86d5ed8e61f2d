/**
 * StreamDeletion on the EventStoreDB store, beyond the shared deletion contract, against the protocol fake: the
 * tombstone the adapter sends, `$all` (which keeps a tombstoned stream's events until a scavenge) seen through
 * readAll and subscribeAll, what one read asks the server, and how the server's answers map to port errors.
 */
import { DeadlineExceededError, EventStoreDBClient, StreamDeletedError as ClientStreamDeletedError, TimeoutError, UnavailableError } from '@eventstore/db-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore } from '../../../../adapters/store/eventstoredb/index.js';
import { toDeleteError } from '../../../../adapters/store/eventstoredb/mapping.js';
import { streamRevision, type SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { isConcurrencyError, isNotLeaderError, isStoreAccessDeniedError, isStreamDeletedError, type ConcurrencyError } from '../../../../runtime/ports/store-errors.js';
import { collect, ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';

const fake = new FakeEsdb({ features: 'batch-append' });
beforeAll(() => fake.start());
afterAll(() => fake.stop());
const open = () => openEventStoreDbStore({ connectionString: fake.connectionString });

/** The server streams (with the default prefix) that hold `stream`'s events in $all, read with the raw client. */
const rawAll = async (stream: string): Promise<string[]> => {
  const client = EventStoreDBClient.connectionString(fake.connectionString);
  try {
    const out: string[] = [];
    for await (const e of client.readAll()) if (e.event?.streamId === `steerlog-${stream}`) out.push(e.event.type);
    return out;
  } finally {
    await client.dispose();
  }
};

describe('eventstoredb StreamDeletion — protocol fake', () => {
  it('tombstones on the leader with the exact revision; $all keeps the events (until a scavenge) but readAll shows none of them', async () => {
    const store = open();
    try {
      const s = uniqueStream('tomb');
      await store.append(s, [ev('a'), ev('b')], 'no_stream');
      const before = fake.calls.Tombstone;
      const checks = fake.leaderChecks.requiresLeader;
      await store.deleteStream(s, streamRevision(1n));
      expect(fake.calls.Tombstone).toBe(before + 1);
      expect(fake.leaderChecks.requiresLeader).toBe(checks + 1);
      expect(await rawAll(s)).toEqual(['test/event', 'test/event', '$streamDeleted']);
      expect((await collect(() => store.readAll())).filter((e) => e.stream === s)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a stream tombstoned by someone else (not through this store) is hidden from readAll too', async () => {
    const store = open();
    const client = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      const [gone, kept] = [uniqueStream('other-gone'), uniqueStream('other-kept')];
      await store.append(gone, [ev('g1')], 'no_stream');
      await store.append(kept, [ev('k1')], 'no_stream');
      await client.tombstoneStream(`steerlog-${gone}`, { expectedRevision: 0n });
      expect((await collect(() => store.readAll())).filter((e) => e.stream === gone || e.stream === kept).map((e) => e.id)).toEqual(['k1']);
      expect(isStreamDeletedError(await rejection(() => store.append(gone, [ev('g2')], 'any')))).toBe(true);
    } finally {
      await client.dispose();
      await store.close();
    }
  });

  it('one readAll asks each stream it meets once; a stream known deleted is not asked again', async () => {
    const store = open();
    try {
      const streams = [uniqueStream('probe-a'), uniqueStream('probe-b'), uniqueStream('probe-c')];
      for (const s of streams) await store.append(s, [ev(`${s}-1`), ev(`${s}-2`)], 'no_stream');
      await store.deleteStream(streams[0]!, streamRevision(1n));
      const seen = new Set((await collect(() => store.readAll())).map((e) => e.stream));
      // every stream in $all, less the deleted one: each live one asked once per read, the deleted one never
      const reads = fake.calls.Read;
      const again = await collect(() => store.readAll());
      expect(fake.calls.Read - reads).toBe(1 + seen.size);
      expect(new Set(again.map((e) => e.stream))).toEqual(seen);
      expect(seen.has(streams[0]!)).toBe(false);
      expect(seen.has(streams[1]!) && seen.has(streams[2]!)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('subscribeAll skips a tombstoned stream while catching up, puts caught-up after the last live event, then goes live', async () => {
    const store = open();
    const controller = new AbortController();
    try {
      const [gone, kept, later] = [uniqueStream('sub-gone'), uniqueStream('sub-kept'), uniqueStream('sub-later')];
      await store.append(kept, [ev('k1')], 'no_stream');
      await store.append(gone, [ev('g1'), ev('g2')], 'no_stream');
      await store.deleteStream(gone, streamRevision(1n));
      const iterator = store.subscribeAll({ signal: controller.signal })[Symbol.asyncIterator]();
      const got: string[] = [];
      const label = (m: SubscriptionMessage): string => (m.kind === 'event' ? `${m.event.stream === kept ? 'kept' : m.event.stream === later ? 'later' : 'other'}:${m.event.id}` : 'caught-up');
      for (;;) {
        const next = await iterator.next();
        got.push(label(next.value as SubscriptionMessage));
        if (next.value?.kind === 'caught-up') break;
      }
      expect(got.filter((g) => !g.startsWith('other:'))).toEqual(['kept:k1', 'caught-up']);
      expect(got.some((g) => g.includes(':g'))).toBe(false);
      await store.append(later, [ev('l1')], 'no_stream');
      expect(label((await iterator.next()).value as SubscriptionMessage)).toBe('later:l1');
    } finally {
      controller.abort();
      await store.close();
    }
  });

  it('subscribing to a tombstoned stream: caught-up (nothing to read), then StreamDeletedError', async () => {
    const store = open();
    try {
      const s = uniqueStream('sub-one');
      await store.append(s, [ev('a')], 'no_stream');
      await store.deleteStream(s, streamRevision(0n));
      const messages: SubscriptionMessage[] = [];
      const e = await rejection(async () => {
        for await (const m of store.subscribe(s)) messages.push(m);
      });
      expect(messages).toEqual([{ kind: 'caught-up' }]);
      expect(isStreamDeletedError(e)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a peer holding an id index of the deleted stream refuses an append of already stored ids (StreamDeletedError, not an idempotent success)', async () => {
    const store = open();
    const peer = open();
    try {
      const s = uniqueStream('idx');
      await peer.append(s, [ev('a'), ev('b')], 'no_stream');
      await store.deleteStream(s, streamRevision(1n));
      expect(isStreamDeletedError(await rejection(() => peer.append(s, [ev('a'), ev('b')], 'no_stream')))).toBe(true);
      expect(await peer.revision(s)).toBe('no_stream');
    } finally {
      await peer.close();
      await store.close();
    }
  });

  it('refuses before sending anything: a revision that is not exact, a known deleted stream; a follower answers NotLeader', async () => {
    const store = open();
    try {
      const s = uniqueStream('refuse');
      await store.append(s, [ev('a')], 'no_stream');
      const before = fake.calls.Tombstone;
      await expect(store.deleteStream(s, 'any' as never)).rejects.toThrow(TypeError);
      await expect(store.deleteStream(s, -1n as never)).rejects.toThrow(TypeError);
      expect(fake.calls.Tombstone).toBe(before);
      fake.becomeFollower({ host: '127.0.0.1', port: fake.port });
      try {
        expect(isNotLeaderError(await rejection(() => store.deleteStream(s, streamRevision(0n))))).toBe(true);
      } finally {
        fake.becomeLeader();
      }
      expect((await collect(() => store.read(s))).map((e) => e.id)).toEqual(['a']);
      const stale = (await rejection(() => store.deleteStream(s, streamRevision(3n)))) as ConcurrencyError;
      expect(isConcurrencyError(stale)).toBe(true);
      expect([stale.expected, stale.actual]).toEqual([3n, 0n]);
      await store.deleteStream(s, streamRevision(0n));
      const sent = fake.calls.Tombstone;
      expect(isStreamDeletedError(await rejection(() => store.deleteStream(s, streamRevision(0n))))).toBe(true);
      expect(fake.calls.Tombstone).toBe(sent); // known deleted: not asked again
    } finally {
      await store.close();
    }
  });
});

describe('eventstoredb tombstone errors (toDeleteError)', () => {
  it('stream-deleted → StreamDeletedError; a refusal → its typed error; an answer that leaves the outcome open → store-io saying so', () => {
    expect(isStreamDeletedError(toDeleteError(ClientStreamDeletedError.fromStreamName('steerlog-s'), 's'))).toBe(true);
    // kurrentdb 1.3.1's StreamTombstonedError (newer error details), matched by its type as the adapter matches every client error
    expect(isStreamDeletedError(toDeleteError(Object.assign(new Error('tombstoned'), { type: 'stream-tombstoned' }), 's'))).toBe(true);
    expect(isStoreAccessDeniedError(toDeleteError(Object.assign(new UnavailableError(), { type: 'access-denied' }), 's'))).toBe(true);
    for (const e of [new TimeoutError(undefined, 'Operation timed out'), new DeadlineExceededError(), new UnavailableError(), new Error('socket hang up')]) {
      const mapped = toDeleteError(e, 's', 'KurrentDB');
      expect(mapped.code).toBe('store-io');
      expect(mapped.message).toMatch(/^deleteStream "s": KurrentDB answered .* after the tombstone was sent: it may or may not have been written/);
      expect(mapped.cause).toBe(e);
    }
  });
});
