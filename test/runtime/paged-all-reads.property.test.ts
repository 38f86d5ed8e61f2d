import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { streamRevision, type EventStore, type NewEvent, type RecordedEvent } from '../../runtime/ports/event-store.js';
import { readAllPages, subscribeAllPages, type PagedSubscriptionMessage } from '../../runtime/ports/paged-reads.js';
import { requiredPortOf } from '../support/store-wrappers.js';

/**
 * The all-streams helpers of runtime/ports/paged-reads.ts over the memory store: `readAllPages`' generic fallback
 * (a store without `readAllPages` gets `readAll` in pages) and `subscribeAllPages`' switch from the stored pages to
 * the store's live `subscribeAll`, with appends racing the switch.
 */

const ev = (id: string): NewEvent => ({ id, type: 'test/event', time: 1, data: { id } });

/** The store's port methods bound to it, without `readAllPages`: what a store without paged all-streams reads offers. */
const withoutPages = (store: EventStore): EventStore => requiredPortOf(store);

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

/** Random appends: (stream index, batch size) pairs. */
const batchesArb = fc.array(fc.tuple(fc.nat(4), fc.integer({ min: 1, max: 4 })), { maxLength: 12 });

const appendBatches = async (store: EventStore, batches: readonly (readonly [number, number])[], tag: string): Promise<void> => {
  for (const [i, [s, n]] of batches.entries()) await store.append(`s${s}`, Array.from({ length: n }, (_, k) => ev(`${tag}-${i}-${k}`)), 'any');
};

describe('readAllPages: the generic fallback (readAll in pages)', () => {
  it('property: for any appends, deletions, after, maxCount and page size, the pages are readAll and the native pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        batchesArb,
        fc.subarray([0, 1, 2, 3, 4]),
        fc.option(fc.integer({ min: -1, max: 40 }), { nil: undefined }),
        fc.option(fc.nat(40), { nil: undefined }),
        fc.integer({ min: 1, max: 45 }),
        async (batches, deleted, after, maxCount, pageSize) => {
          const store = new MemoryEventStore();
          await appendBatches(store, batches, 'e');
          for (const s of deleted) {
            const revision = await store.revision(`s${s}`);
            if (revision !== 'no_stream') await store.deleteStream(`s${s}`, streamRevision(revision));
          }
          const options = { ...(after !== undefined ? { after: BigInt(after) } : {}), ...(maxCount !== undefined ? { maxCount } : {}) };
          const fallback = await collect(readAllPages(withoutPages(store), { ...options, pageSize }));
          const expected = await collect(store.readAll(options));
          expect(fallback.flat()).toEqual(expected);
          expect(fallback.flat().some((e) => deleted.includes(Number(e.stream.slice(1))))).toBe(false);
          // full pages of pageSize, the last one shorter, none empty
          fallback.forEach((p, i) => expect(p.length).toBe(i < fallback.length - 1 ? pageSize : p.length));
          for (const p of fallback) expect(p.length).toBeGreaterThan(0);
          for (const p of fallback) expect(p.length).toBeLessThanOrEqual(pageSize);
          expect((await collect(readAllPages(store, { ...options, pageSize }))).flat()).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('property: readAll failing after k events: the pages hold those k events, then the same error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 30 }), fc.nat(30), fc.integer({ min: 1, max: 10 }), async (n, k0, pageSize) => {
        const k = Math.min(k0, n);
        const store = new MemoryEventStore();
        await store.append('s', Array.from({ length: n }, (_, i) => ev(`e${i}`)), 'no_stream');
        const failure = new Error('damaged record');
        const failing: EventStore = {
          ...withoutPages(store),
          readAll: async function* (options) {
            let count = 0;
            for await (const e of store.readAll(options)) {
              if (count++ === k) throw failure;
              yield e;
            }
            if (k === n) throw failure;
          },
        };
        const got: RecordedEvent[][] = [];
        let error: unknown;
        try {
          for await (const page of readAllPages(failing, { pageSize })) got.push([...page]);
        } catch (e) {
          error = e;
        }
        expect(error).toBe(failure);
        expect(got.flat().map((e) => e.id)).toEqual(Array.from({ length: k }, (_, i) => `e${i}`));
        for (const p of got) expect(p.length).toBeGreaterThan(0);
      }),
      { numRuns: 100 },
    );
  });
});

/** Where the test appends while a subscription runs: between stored pages, at the switch, or at its live start. */
type Hook = 'page' | 'after-stored' | 'subscribe' | 'caught-up';

describe('subscribeAllPages: stored pages, one caught-up, then live — no gap, no duplicate at the switch', () => {
  it('property: appends racing the switch are delivered once each, in global order, after one caught-up', async () => {
    await fc.assert(
      fc.asyncProperty(
        batchesArb,
        // every racing append holds an event, so the live part always has one to deliver
        fc.array(fc.tuple(fc.constantFrom<Hook>('page', 'after-stored', 'subscribe', 'caught-up'), fc.array(fc.tuple(fc.nat(4), fc.integer({ min: 1, max: 4 })), { minLength: 1, maxLength: 6 })), { maxLength: 4 }),
        fc.integer({ min: 1, max: 10 }),
        fc.nat(20),
        fc.boolean(),
        async (history, racing, pageSize, start, fromStart) => {
          const store = new MemoryEventStore();
          await appendBatches(store, history, 'h');
          const stored = await collect(store.readAll());
          const after = fromStart || stored.length === 0 ? undefined : stored[Math.min(start, stored.length - 1)]!.position;
          const hooks = new Map<Hook, (readonly (readonly [number, number])[])[]>();
          for (const [hook, batches] of racing) hooks.set(hook, [...(hooks.get(hook) ?? []), batches]);
          let fired = 0;
          /** Appends the next batches planned at `hook` (a page hook: one set per page; the others: all of them). */
          const fire = async (hook: Hook): Promise<void> => {
            for (let pending = hooks.get(hook)?.shift(); pending !== undefined; pending = hook === 'page' ? undefined : hooks.get(hook)?.shift()) {
              await appendBatches(store, pending, `r${fired++}`);
            }
          };
          const allFired = (): boolean => [...hooks.values()].every((l) => l.length === 0);
          // a store whose reads let the test append at the riskiest moments
          const racy: EventStore = {
            ...withoutPages(store),
            readAllPages: async function* (options) {
              for await (const page of store.readAllPages(options)) {
                yield page;
                await fire('page');
              }
              await fire('after-stored'); // stored read done, live subscription not yet started
            },
            subscribeAll: (options) => {
              const live = store.subscribeAll(options);
              return (async function* () {
                await fire('subscribe');
                yield* live;
              })();
            },
          };
          const controller = new AbortController();
          const messages: PagedSubscriptionMessage[] = [];
          const total = history.reduce((n, [, k]) => n + k, 0) + racing.reduce((n, [, b]) => n + b.reduce((m, [, k]) => m + k, 0), 0);
          const expectedCount = (): Promise<number> => collect(store.readAll(after !== undefined ? { after } : {})).then((e) => e.length);
          const seen = (): number => messages.flatMap((m) => (m.kind === 'events' ? m.events : [])).length;
          let caughtUp = false;
          for await (const message of subscribeAllPages(racy, { pageSize, signal: controller.signal, ...(after !== undefined ? { after } : {}) })) {
            messages.push(message);
            if (message.kind === 'caught-up') {
              caughtUp = true;
              await fire('caught-up');
              // page hooks that found no page to fire at are appended now, live
              while ((hooks.get('page')?.length ?? 0) > 0) await fire('page');
            }
            if (caughtUp && allFired() && seen() === (await expectedCount())) break;
          }
          controller.abort();
          const events = messages.flatMap((m) => (m.kind === 'events' ? m.events : []));
          const expected = await collect(store.readAll(after !== undefined ? { after } : {}));
          expect(events.map((e) => e.id)).toEqual(expected.map((e) => e.id));
          expect(await collect(store.readAll())).toHaveLength(total);
          const markers = messages.flatMap((m, i) => (m.kind === 'caught-up' ? [i] : []));
          expect(markers).toHaveLength(1);
          // every event stored before the subscription started precedes the marker
          const storedAfter = stored.filter((e) => after === undefined || e.position > after).length;
          expect(messages.slice(0, markers[0]).flatMap((m) => (m.kind === 'events' ? m.events : [])).length).toBeGreaterThanOrEqual(storedAfter);
          for (const m of messages.slice(0, markers[0])) if (m.kind === 'events') expect(m.events.length).toBeLessThanOrEqual(pageSize);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a store without readAllPages is subscribed to after `after` directly, each event a page of one', async () => {
    const store = new MemoryEventStore();
    await store.append('s', Array.from({ length: 5 }, (_, i) => ev(`e${i}`)), 'no_stream');
    const subscribedAfter: (bigint | undefined)[] = [];
    const plain: EventStore = {
      ...withoutPages(store),
      subscribeAll: (options) => {
        subscribedAfter.push(options?.after);
        return store.subscribeAll(options);
      },
    };
    const controller = new AbortController();
    const got: PagedSubscriptionMessage[] = [];
    for await (const m of subscribeAllPages(plain, { after: 1n, signal: controller.signal, pageSize: 10 })) {
      got.push(m);
      if (m.kind === 'caught-up') break;
    }
    expect(got.map((m) => (m.kind === 'events' ? m.events.map((e) => e.id) : 'caught-up'))).toEqual([['e2'], ['e3'], ['e4'], 'caught-up']);
    expect(subscribedAfter).toEqual([1n]);
  });

  it('with readAllPages, the live subscription starts after the last stored event delivered; an aborted signal ends it', async () => {
    const store = new MemoryEventStore();
    await store.append('s', Array.from({ length: 7 }, (_, i) => ev(`e${i}`)), 'no_stream');
    const subscribedAfter: (bigint | undefined)[] = [];
    const spying: EventStore = {
      ...withoutPages(store),
      readAllPages: (options) => store.readAllPages(options),
      subscribeAll: (options) => {
        subscribedAfter.push(options?.after);
        return store.subscribeAll(options);
      },
    };
    const controller = new AbortController();
    const got: PagedSubscriptionMessage[] = [];
    for await (const m of subscribeAllPages(spying, { after: 1n, signal: controller.signal, pageSize: 2 })) {
      got.push(m);
      if (m.kind === 'caught-up') void store.append('s', [ev('live')], 6n);
      if (m.kind === 'events' && m.events.some((e) => e.id === 'live')) controller.abort();
    }
    expect(got.map((m) => (m.kind === 'events' ? m.events.map((e) => e.id) : 'caught-up'))).toEqual([['e2', 'e3'], ['e4', 'e5'], ['e6'], 'caught-up', ['live']]);
    expect(subscribedAfter).toEqual([6n]);
    const aborted = new AbortController();
    aborted.abort();
    expect(await collect(subscribeAllPages(spying, { signal: aborted.signal }))).toEqual([]);
  });
});
