/**
 * A subscription stopped by its consumer, or ended by the server, must not keep the store's close() waiting
 * (protocol fake, `@eventstore/db-client`).
 *
 * The client pipes a subscription's gRPC call stream into the Readable it hands out, as it does for reads, and its
 * dispose() (the store's close) waits for every call stream to finish. A read left early could leave that call
 * stream paused, holding the server's end unread, and close() then waited forever (see early-exit.test.ts). A
 * subscription's call differs: the fake, like the server code it imitates, never ends one with an OK status (a drop
 * ends it with an error status, which finishes the call stream even when paused), and while the call is open the
 * client's cancel ends it. Were a server to end a subscription OK with events the consumer has not read, the
 * first test below would hang at 32 events as reads did (checked once against a fake changed to do so, not kept).
 * These tests stop subscriptions in each way a consumer or the server can, with the client's buffers holding
 * events the consumer has not read, and check that close() settles.
 *
 * close() is awaited with a bound (`settles`): a liveness check, not a speed assertion.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventStoreDbStore } from '../../../../adapters/store/eventstoredb/index.js';
import type { EventStore, NewEvent, SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { isSubscriptionDroppedError } from '../../../../runtime/ports/store-errors.js';
import { ev, rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';
import { settles } from './settles.js';

const fake = new FakeEsdb({ features: 'batch-append' });
const dropping = new FakeEsdb({ features: 'batch-append', dropSlowSubscribers: true });
beforeAll(async () => {
  await fake.start();
  await dropping.start();
});
afterAll(async () => {
  await fake.stop();
  await dropping.stop();
});

const events = (s: string, n: number, from = 0): NewEvent[] => Array.from({ length: n }, (_, i) => ev(`${s}-${from + i}`));
/** Events of 1 kB: a subscriber that stops reading fills the transport quickly. */
const padded = (s: string, n: number): NewEvent[] => Array.from({ length: n }, (_, i) => ev(`${s}-${i}`, 'test/event', { pad: 'p'.repeat(1000) }));

/** What the next message is: an event's id or `caught-up` (`done` when the subscription ended). */
const next = async (it: AsyncIterator<SubscriptionMessage>): Promise<string> => {
  const r = await it.next();
  if (r.done) return 'done';
  return r.value.kind === 'caught-up' ? 'caught-up' : r.value.event.id;
};

type Kind = 'subscribe' | 'subscribeAll';

/** A stream of `n` events, and a subscription (of `kind`) whose first event is that stream's first. */
const subscription = async (store: EventStore, kind: Kind, n: number, signal?: AbortSignal) => {
  // every `$all` event after the marker is this test's
  const after = (await store.append(uniqueStream('mark'), [ev(uniqueStream('m'))], 'no_stream')).position;
  const s = uniqueStream('sub-exit');
  await store.append(s, events(s, n), 'no_stream');
  const caughtUpBefore = fake.caughtUpCount;
  const it = (kind === 'subscribe' ? store.subscribe(s, { signal }) : store.subscribeAll({ after, signal }))[Symbol.asyncIterator]();
  return { s, it, caughtUpBefore };
};

/**
 * Holds the subscription, one event taken, until the fake has sent what it can (all of it and `caught_up` when the
 * client's buffers and the transport hold it: up to `HELD`; else until the transport is full) and answered a read.
 */
const holdDuringCatchUp = async (store: EventStore, s: string, n: number, caughtUpBefore: number): Promise<void> => {
  if (n <= HELD) await fake.caughtUpSent(caughtUpBefore + 1);
  expect(await store.revision(s)).toBe(BigInt(n - 1));
};

/** Up to this many events (of `ev`'s size) the server sends the whole catch-up to a subscriber that reads none. */
const HELD = 64;
// lengths around what the client's buffers hold (as for reads), and far past what the transport holds
const LENGTHS = [24, 32, 40, HELD, 5000];

describe.each(['subscribe', 'subscribeAll'] as const)('%s: a subscription stopped by its consumer does not keep close() waiting', (kind) => {
  it('stopped during catch-up (one event taken, the rest sent by the server), by return()', async () => {
    for (const n of LENGTHS) {
      const store = openEventStoreDbStore({ connectionString: fake.connectionString });
      const { s, it, caughtUpBefore } = await subscription(store, kind, n);
      expect(await next(it)).toBe(`${s}-0`);
      await holdDuringCatchUp(store, s, n, caughtUpBefore);
      await it.return!();
      await settles(`close() after a ${kind} of ${n} events stopped during catch-up`, store.close());
    }
  }, 60_000);

  it('stopped during catch-up by its abort signal, then read on', async () => {
    for (const n of LENGTHS) {
      const store = openEventStoreDbStore({ connectionString: fake.connectionString });
      const ac = new AbortController();
      const { s, it, caughtUpBefore } = await subscription(store, kind, n, ac.signal);
      expect(await next(it)).toBe(`${s}-0`);
      await holdDuringCatchUp(store, s, n, caughtUpBefore);
      ac.abort();
      expect(await next(it)).toBe('done');
      await settles(`close() after a ${kind} of ${n} events aborted during catch-up`, store.close());
    }
  }, 60_000);

  it('a for await that breaks after catch-up, with live events appended but not read', async () => {
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
    const n = 40;
    const { s, it } = await subscription(store, kind, n);
    const seen: string[] = [];
    for await (const m of { [Symbol.asyncIterator]: () => it }) {
      if (m.kind === 'caught-up') {
        await store.append(s, events(s, 40, n), BigInt(n - 1));
        break;
      }
      seen.push(m.event.id);
    }
    expect(seen).toEqual(events(s, n).map((e) => e.id));
    await settles(`close() after a ${kind} left after catch-up`, store.close());
  }, 10_000);

  it('aborted while waiting for a live event', async () => {
    const store = openEventStoreDbStore({ connectionString: fake.connectionString });
    const ac = new AbortController();
    const { s, it } = await subscription(store, kind, 3, ac.signal);
    expect([await next(it), await next(it), await next(it), await next(it)]).toEqual([`${s}-0`, `${s}-1`, `${s}-2`, 'caught-up']);
    const waiting = next(it);
    ac.abort();
    expect(await waiting).toBe('done');
    await settles(`close() after a live ${kind} aborted`, store.close());
  }, 10_000);

  it('still held by its consumer (neither returned nor aborted) when the store closes: close() settles and ends it', async () => {
    for (const n of LENGTHS) {
      const store = openEventStoreDbStore({ connectionString: fake.connectionString });
      const { s, it, caughtUpBefore } = await subscription(store, kind, n);
      expect(await next(it)).toBe(`${s}-0`);
      await holdDuringCatchUp(store, s, n, caughtUpBefore);
      await settles(`close() while a ${kind} of ${n} events is held`, store.close());
      expect(await next(it)).toBe('done');
    }
  }, 60_000);
});

describe('a subscription ended by the server does not keep close() waiting', () => {
  it('dropped as too slow (ABORTED) while its consumer holds unread events, then left without reading the error', async () => {
    const store = openEventStoreDbStore({ connectionString: dropping.connectionString });
    const s = uniqueStream('sub-drop');
    const it = store.subscribe(s)[Symbol.asyncIterator]();
    expect(await next(it)).toBe('caught-up');
    let rev = -1n;
    for (let i = 0; dropping.slowDrops === 0 && i < 400; i++) {
      await store.append(s, padded(`${s}-b${i}`, 10), rev < 0n ? 'no_stream' : rev);
      rev += 10n;
    }
    expect(dropping.slowDrops).toBe(1);
    await dropping.readsClosed(); // the server has ended the call
    await it.return!();
    await settles('close() after a dropped subscription left unread', store.close());
  }, 30_000);

  it('dropped as too slow, its consumer reading on to the error', async () => {
    const store = openEventStoreDbStore({ connectionString: dropping.connectionString });
    const s = uniqueStream('sub-drop');
    const it = store.subscribe(s)[Symbol.asyncIterator]();
    expect(await next(it)).toBe('caught-up');
    let rev = -1n;
    const drops = dropping.slowDrops;
    for (let i = 0; dropping.slowDrops === drops && i < 400; i++) {
      await store.append(s, padded(`${s}-b${i}`, 10), rev < 0n ? 'no_stream' : rev);
      rev += 10n;
    }
    expect(dropping.slowDrops).toBe(drops + 1);
    const e = await rejection(async () => {
      for (;;) if ((await it.next()).done) return;
    });
    expect(isSubscriptionDroppedError(e)).toBe(true);
    await settles('close() after a dropped subscription read to its error', store.close());
  }, 30_000);
});
