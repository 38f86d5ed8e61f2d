/**
 * Subscriptions across server versions (protocol fake profiles): 23.10 sends no `caught_up`, 24.2+ does; a live
 * subscriber that falls more than 32 events behind is dropped with ABORTED "consumer too slow". The adapter makes
 * its own caught-up point (the head read when the subscription starts), so the port's marker is the same on every
 * version, and `runProjection` resubscribes after a drop without skipping or repeating an event.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../../adapters/checkpoints/memory-checkpoint-store.js';
import { openEventStoreDbStore, type EventStoreDbEventStore } from '../../../../adapters/store/eventstoredb/index.js';
import { defineProjection, runProjection } from '../../../../projections/index.js';
import type { Checkpoint, ProjectionKey } from '../../../../projections/checkpoints/checkpoint-store.js';
import type { NewEvent, SubscriptionMessage } from '../../../../runtime/ports/event-store.js';
import { isSubscriptionDroppedError } from '../../../../runtime/ports/store-errors.js';
import { rejection, uniqueStream } from '../../../contract/event-store.contract.js';
import { FakeEsdb } from './fake/esdb-fake.js';
import type { FakeServerProfile } from './fake/server-profile.js';

const tick = (id: string, pad = 0): NewEvent => ({ id, type: 'test/tick', time: 1, data: { pad: 'p'.repeat(pad) }, ignorable: true });
const ticks = (prefix: string, n: number, pad = 0): NewEvent[] => Array.from({ length: n }, (_, i) => tick(`${prefix}-${i}`, pad));

const fakes: FakeEsdb[] = [];
const stores: EventStoreDbEventStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const f of fakes.splice(0)) await f.stop();
});
const setup = async (profile: FakeServerProfile, dropSlowSubscribers = false) => {
  const fake = new FakeEsdb({ features: 'batch-append', profile, dropSlowSubscribers });
  await fake.start();
  fakes.push(fake);
  const store = openEventStoreDbStore({ connectionString: fake.connectionString });
  stores.push(store);
  return { fake, store };
};

const take = async (it: AsyncIterator<SubscriptionMessage>, n: number): Promise<string[]> => {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = (await it.next()).value as SubscriptionMessage;
    out.push(m.kind === 'caught-up' ? 'caught-up' : m.event.id);
  }
  return out;
};

describe.each(['23.10', '24.2', '25.1'] as const)('eventstoredb subscriptions — protocol fake profile %s', (profile) => {
  it(`caught_up from the server: ${profile === '23.10' ? 'never' : 'once per subscription'}; the port's marker sits after the head either way`, async () => {
    const { fake, store } = await setup(profile);
    const s = uniqueStream();
    await store.append(s, ticks('h', 5), 'no_stream');
    const ac = new AbortController();
    const it = store.subscribe(s, { signal: ac.signal })[Symbol.asyncIterator]();
    expect(await take(it, 6)).toEqual(['h-0', 'h-1', 'h-2', 'h-3', 'h-4', 'caught-up']);
    await store.append(s, [tick('live')], 4n);
    expect(await take(it, 1)).toEqual(['live']);
    expect(fake.caughtUpCount).toBe(profile === '23.10' ? 0 : 1);
    // from past the head, and on an empty stream: caught up at once
    const it2 = store.subscribe(s, { from: 6n, signal: ac.signal })[Symbol.asyncIterator]();
    expect(await take(it2, 1)).toEqual(['caught-up']);
    const it3 = store.subscribe(uniqueStream(), { signal: ac.signal })[Symbol.asyncIterator]();
    expect(await take(it3, 1)).toEqual(['caught-up']);
    ac.abort();
    await Promise.all([it.return?.(), it2.return?.(), it3.return?.()]);
  });

  it('subscribeAll: the marker follows the last visible event even when system events come after it', async () => {
    const { store, fake } = await setup(profile);
    const s = uniqueStream();
    await store.append(s, ticks('a', 3), 'no_stream');
    fake.writeSystemEvent('$stats-127.0.0.1:2113', '$statsCollected');
    const ac = new AbortController();
    const it = store.subscribeAll({ signal: ac.signal })[Symbol.asyncIterator]();
    expect(await take(it, 4)).toEqual(['a-0', 'a-1', 'a-2', 'caught-up']);
    ac.abort();
    await it.return?.();
  });
});

describe('eventstoredb slow live subscribers — protocol fake', () => {
  it('a subscriber that stops reading while 32+ events arrive is dropped: subscription-dropped, retryable', async () => {
    const { fake, store } = await setup('24.2', true);
    const s = uniqueStream();
    const it = store.subscribe(s)[Symbol.asyncIterator]();
    expect(await take(it, 1)).toEqual(['caught-up']);
    let rev = -1n;
    for (let i = 0; fake.slowDrops === 0 && i < 400; i++) {
      await store.append(s, ticks(`b${i}`, 10, 1000), rev < 0n ? 'no_stream' : rev);
      rev += 10n;
    }
    expect(fake.slowDrops).toBe(1);
    const e = await rejection(async () => {
      for (;;) if ((await it.next()).done) return;
    });
    expect(isSubscriptionDroppedError(e)).toBe(true);
  }, 30_000);

  it('runProjection resubscribes after a drop: every event folded once, in order', async () => {
    const { fake, store } = await setup('23.10', true);
    const s = uniqueStream();
    // a slow consumer: every event is committed, and each commit takes a while
    class SlowCheckpoints extends MemoryCheckpointStore {
      override async save(key: ProjectionKey, c: Checkpoint): Promise<void> {
        await new Promise((r) => setTimeout(r, 2));
        return super.save(key, c);
      }
    }
    const projection = defineProjection<{ ids: string[] }>({
      name: 'ids',
      version: 1,
      initialState: { ids: [] },
      evolve: (st, e) => ({ ids: [...st.ids, e.event.id] }),
    });
    const run = runProjection(projection, { store, checkpoints: new SlowCheckpoints(), stream: s, batchSize: 1 });
    await run.caughtUp;
    const written: string[] = [];
    let rev = -1n;
    for (let i = 0; i < 60; i++) {
      const batch = Array.from({ length: 10 }, () => tick(randomUUID(), 1000));
      await store.append(s, batch, rev < 0n ? 'no_stream' : rev);
      written.push(...batch.map((e) => e.id));
      rev += 10n;
    }
    await run.waitFor(rev);
    expect(fake.slowDrops).toBeGreaterThanOrEqual(1);
    expect(run.state().ids).toEqual(written);
    await run.stop();
  }, 30_000);
});
