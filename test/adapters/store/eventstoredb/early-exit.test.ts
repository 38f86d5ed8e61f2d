/**
 * A read its reader leaves early must not keep the store's close() waiting (protocol fake, `@eventstore/db-client`).
 *
 * The client pipes each read's gRPC call stream into the Readable it hands out, and its dispose() (the store's close)
 * waits for every call stream to finish. Leaving a read early destroys that Readable, which unpipes and pauses the
 * call stream; cancelling the call does nothing once the server has ended it. A call stream whose end had already
 * arrived, paused and read by nobody, never finished: close() waited forever. Whether the end has arrived when the
 * reader stops depends on how much the client's buffers hold, so the reader below holds its read, one event taken,
 * until the fake has ended the call and the client has answered one more request over the same connection, then
 * stops; this for a range of read lengths around what those buffers hold.
 *
 * close() is awaited with a bound (`settles`): a liveness check (a hang is reported as a failure instead of a test
 * timeout), not a speed assertion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore } from '../../../../adapters/store/eventstoredb/index.js';
import type { EventStore, RecordedEvent } from '../../../../runtime/ports/event-store.js';
import { ev, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';
import { settles } from './settles.js';

const fake = new FakeEsdb({ features: 'append-only' });
beforeAll(() => fake.start());
afterAll(() => fake.stop());

/** Appends a marker event; every `$all` event after its position is this test's. */
const mark = async (store: EventStore): Promise<bigint> => (await store.append(uniqueStream('mark'), [ev(uniqueStream('m'))], 'no_stream')).position;

/** `readAll` reads this many events ahead of its reader (grpc-event-store.ts, READ_ALL_PAGE). */
const READ_ALL_AHEAD = 256;

describe('a read left early does not keep close() waiting', () => {
  it.each(['read', 'readAll'] as const)('%s: one event taken, the rest received but not read, then the reader stops', async (kind) => {
    // reads whose tail the client holds, for every length in a range around what its buffers take
    for (let unread = 24; unread <= 44; unread++) {
      const store = openEventStoreDbStore({ connectionString: fake.connectionString });
      const after = await mark(store);
      const s = uniqueStream('early-hold');
      const n = 1 + unread + (kind === 'readAll' ? READ_ALL_AHEAD : 0);
      await store.append(s, Array.from({ length: n }, (_, i) => ev(`${s}-${i}`)), 'no_stream');
      const reader = (kind === 'read' ? store.read(s) : store.readAll({ after }))[Symbol.asyncIterator]();
      const first = await reader.next();
      expect((first.value as RecordedEvent).id).toBe(`${s}-0`);
      await fake.readsClosed(); // the server has sent everything, and the call's end
      expect(await store.revision(s)).toBe(BigInt(n - 1)); // one more request answered over the same connection
      await reader.return!();
      await settles(`close() after a ${kind} of ${n} events left after one`, store.close());
    }
  }, 60_000);

  it.each([20, 600])('readAll with maxCount over %i events, then close', async (n) => {
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
    const s = uniqueStream('early');
    await store.append(s, Array.from({ length: n }, (_, i) => ev(`${s}-${i}`)), 'no_stream');
    const all: bigint[] = [];
    for await (const e of store.readAll()) all.push(e.position);
    const got: string[] = [];
    for await (const e of store.readAll({ after: all[2]!, maxCount: 3 })) got.push(e.id);
    expect(got.length).toBe(3);
    await settles('close() after a readAll left by maxCount', store.close());
  }, 10_000);
});
