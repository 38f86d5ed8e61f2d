import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventStore, RecordedEvent } from '../../runtime/ports/event-store.js';
import { readAllPages, subscribeAllPages } from '../../runtime/ports/paged-reads.js';
import { partitionOf, type StreamPartitionFilter } from '../../runtime/ports/stream-partition.js';
import { collect, ev, uniqueStream, type EventStoreHarness } from './event-store.contract.js';

/**
 * Partitioned global reads (`ReadAllOptions.partition`): what projection workers read. A store that filters
 * (`harness.partitionedReads`, default true) hands out exactly the events of `readAll` whose stream is in a kept
 * partition, in global order — catch-up pages, `readAll`, and the live part of `subscribeAll`; every store hands out
 * at least those (one that cannot filter ignores the option). Every read starts after a marker (shared stores).
 */
export function describePartitionedReadsContract(name: string, harness: EventStoreHarness, current: () => EventStore): void {
  const filters = harness.partitionedReads !== false;
  describe(`partitioned global reads — ${name}`, () => {
    const mark = async (store: EventStore): Promise<bigint> => (await store.append(uniqueStream('mark'), [ev(uniqueStream('m'))], 'no_stream')).position;
    const kept = (events: readonly RecordedEvent[], filter: StreamPartitionFilter): RecordedEvent[] =>
      events.filter((e) => filter.count <= 1 || filter.keep.includes(partitionOf(e.stream, filter.count)));
    const expectRead = (got: readonly RecordedEvent[], all: readonly RecordedEvent[], filter: StreamPartitionFilter): void => {
      if (filters) expect(got).toEqual(kept(all, filter));
      else expect(kept(got, filter)).toEqual(kept(all, filter));
    };

    it('any streams, any partition count and kept set: the events of readAll in kept partitions, in order (pages, readAll, maxCount)', async () => {
      const store = current();
      const after = await mark(store);
      const streams = Array.from({ length: 12 }, (_, i) => uniqueStream(`part-${i}-é✓`));
      for (let round = 0; round < 3; round++) {
        for (const [i, s] of streams.entries()) if ((i + round) % 3 !== 0) await store.append(s, [ev(`${s}-${round}-a`), ev(`${s}-${round}-b`)], 'any');
      }
      const all = await collect(() => store.readAll({ after }));
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 9 }).chain((count) => fc.record({ count: fc.constant(count), keep: fc.uniqueArray(fc.integer({ min: 0, max: count - 1 }), { maxLength: count }) })),
          fc.integer({ min: 1, max: 7 }),
          async (filter, pageSize) => {
            const pages = await collect(() => readAllPages(store, { after, partition: filter, pageSize }));
            for (const p of pages) expect(p.length).toBeGreaterThan(0);
            expectRead(pages.flat(), all, filter);
            expectRead(await collect(() => store.readAll({ after, partition: filter })), all, filter);
            if (filters) expect(await collect(() => store.readAll({ after, partition: filter, maxCount: 3 }))).toEqual(kept(all, filter).slice(0, 3));
          },
        ),
        { numRuns: 25 },
      );
    });

    it('subscribeAll with a partition: the kept events caught up, then the kept live ones; the others never delivered', async () => {
      const store = current();
      const after = await mark(store);
      const streams = Array.from({ length: 8 }, (_, i) => uniqueStream(`sub-${i}`));
      const filter = { count: 4, keep: [1, 3] };
      for (const s of streams) await store.append(s, [ev(`${s}-old`)], 'any');
      const controller = new AbortController();
      const got: RecordedEvent[] = [];
      let caughtUp = false;
      const all = (): Promise<RecordedEvent[]> => collect(() => store.readAll({ after }));
      const reading = (async () => {
        for await (const m of subscribeAllPages(store, { after, partition: filter, signal: controller.signal })) {
          if (m.kind === 'caught-up') caughtUp = true;
          else got.push(...m.events);
        }
      })();
      for (const s of streams) await store.append(s, [ev(`${s}-new`)], 'any');
      const wanted = kept(await all(), filter).length;
      while (!caughtUp || kept(got, filter).length < wanted) await new Promise((r) => setTimeout(r, 20));
      controller.abort();
      await reading;
      expect(caughtUp).toBe(true);
      expectRead(got, await all(), filter);
    });
  });
}
