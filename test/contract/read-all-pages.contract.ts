import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamRevision, type EventStore, type ReadAllPagesOptions, type RecordedEvent } from '../../runtime/ports/event-store.js';
import { readAllPages } from '../../runtime/ports/paged-reads.js';
import { canDeleteStreams } from '../../runtime/ports/stream-deletion.js';
import { collect, ev, uniqueStream, type EventStoreHarness } from './event-store.contract.js';

/**
 * Paged all-streams reads (EventStore.readAllPages, through `readAllPages`: the store's own pages, or `readAll`
 * batched for a store without them): exactly the events of `readAll` with the same options, in non-empty pages of at
 * most `pageSize`, deleted streams skipped as `readAll` skips them. Stores shared between tests (PostgreSQL, the
 * EventStoreDB fake) hold other tests' events, so every read starts after a marker event this test appended.
 */
export function describeReadAllPagesContract(name: string, harness: EventStoreHarness, current: () => EventStore): void {
  describe(`paged all-streams reads — ${name}`, () => {
    /** Appends a marker event; every event after its position is this test's. */
    const mark = async (store: EventStore): Promise<bigint> => (await store.append(uniqueStream('mark'), [ev(uniqueStream('m'))], 'no_stream')).position;
    const pages = (store: EventStore, options: ReadAllPagesOptions): Promise<(readonly RecordedEvent[])[]> => collect(() => readAllPages(store, options));
    /** The pages hold exactly what `readAll` yields with the same options, none empty, none larger than `pageSize`. */
    const expectSameAsReadAll = async (store: EventStore, options: ReadAllPagesOptions): Promise<(readonly RecordedEvent[])[]> => {
      const ps = await pages(store, options);
      const { pageSize, ...readOptions } = options;
      expect(ps.flat()).toEqual(await collect(() => store.readAll(readOptions)));
      for (const p of ps) {
        expect(p.length).toBeGreaterThan(0);
        if (pageSize !== undefined && Number.isFinite(pageSize)) expect(p.length).toBeLessThanOrEqual(Math.max(1, Math.floor(pageSize)));
      }
      return ps;
    };
    /** Appends `batches` (stream index, batch size) in order; returns the ids in commit order. */
    const appendAll = async (store: EventStore, streams: readonly string[], batches: readonly (readonly [number, number])[]): Promise<string[]> => {
      const ids: string[] = [];
      const counts = streams.map(() => 0);
      for (const [s, size] of batches) {
        const stream = streams[s]!;
        const events = Array.from({ length: size }, (_, k) => ev(`${stream}-${counts[s]! + k}`, 'test/event', { s, k }));
        await store.append(stream, events, 'any');
        counts[s]! += size;
        ids.push(...events.map((e) => e.id));
      }
      return ids;
    };

    it('every page size from 1 to past the end: the events of readAll, in global order, split where a page is full', async () => {
      const store = current();
      const after = await mark(store);
      const streams = [uniqueStream('all-p-a'), uniqueStream('all-p-b'), uniqueStream('all-p-c')];
      const ids = await appendAll(store, streams, [[0, 2], [1, 1], [2, 3], [0, 1], [1, 4], [2, 1], [0, 2]]);
      for (let pageSize = 1; pageSize <= ids.length + 1; pageSize++) {
        const ps = await expectSameAsReadAll(store, { after, pageSize });
        expect(ps.flat().map((e) => e.id)).toEqual(ids);
        const positions = ps.flat().map((e) => e.position);
        for (let i = 1; i < positions.length; i++) expect(positions[i]! > positions[i - 1]!).toBe(true);
      }
      expect((await expectSameAsReadAll(store, { after })).flat().map((e) => e.id)).toEqual(ids);
      expect((await expectSameAsReadAll(store, { after, pageSize: Number.POSITIVE_INFINITY })).flat().map((e) => e.id)).toEqual(ids);
      // a page size below 1 reads pages of one event; a fractional one is rounded down
      expect((await pages(store, { after, pageSize: 0 })).map((p) => p.length)).toEqual(ids.map(() => 1));
      expect((await pages(store, { after, pageSize: 5.9 })).flat().map((e) => e.id)).toEqual(ids);
    });

    it('after and maxCount: the events readAll gives; maxCount 0 and a start past the end yield no page', async () => {
      const store = current();
      const after = await mark(store);
      const streams = [uniqueStream('all-m-a'), uniqueStream('all-m-b')];
      const ids = await appendAll(store, streams, [[0, 3], [1, 3], [0, 3], [1, 3]]);
      const all = (await pages(store, { after })).flat();
      expect(all.map((e) => e.id)).toEqual(ids);
      for (const [start, maxCount, pageSize] of [[0, 5, 2], [3, 4, 4], [5, 100, 3], [2, 1, 1], [11, 5, 2], [6, 5, 2]] as const) {
        const got = (await expectSameAsReadAll(store, { after: all[start]!.position, maxCount, pageSize })).flat();
        expect(got.map((e) => e.id)).toEqual(ids.slice(start + 1, start + 1 + maxCount));
      }
      expect(await pages(store, { after, maxCount: 0 })).toEqual([]);
      expect(await pages(store, { after: all.at(-1)!.position })).toEqual([]);
    });

    it('pages are the reader\u2019s: emptying one changes nothing the store hands out next', async () => {
      const store = current();
      const after = await mark(store);
      const ids = await appendAll(store, [uniqueStream('all-own')], [[0, 7]]);
      for (const p of await pages(store, { after, pageSize: 3 })) (p as RecordedEvent[]).length = 0;
      expect((await pages(store, { after, pageSize: 3 })).flat().map((e) => e.id)).toEqual(ids);
    });

    it.skipIf(harness.deletion === false)('a deleted stream is skipped as readAll skips it, the others keep their positions', async () => {
      const store = current();
      if (!canDeleteStreams(store)) throw new Error(`${name} does not implement StreamDeletion`);
      const after = await mark(store);
      const streams = [uniqueStream('all-d-a'), uniqueStream('all-d-b'), uniqueStream('all-d-c')];
      const ids = await appendAll(store, streams, [[0, 2], [1, 3], [2, 1], [1, 2], [0, 1], [2, 2]]);
      const before = (await pages(store, { after })).flat();
      await store.deleteStream(streams[1]!, streamRevision(4));
      const kept = before.filter((e) => e.stream !== streams[1]);
      expect(kept.map((e) => e.id)).toEqual(ids.filter((id) => !id.startsWith(`${streams[1]}-`)));
      for (let pageSize = 1; pageSize <= kept.length + 1; pageSize++) {
        const got = (await expectSameAsReadAll(store, { after, pageSize })).flat();
        expect(got.map((e) => [e.id, e.position])).toEqual(kept.map((e) => [e.id, e.position]));
      }
      // maxCount counts the events handed out, not the deleted ones skipped
      expect((await expectSameAsReadAll(store, { after, maxCount: 3, pageSize: 2 })).flat().map((e) => e.id)).toEqual(kept.slice(0, 3).map((e) => e.id));
    });

    it('property: random appends across several streams, any after, maxCount and page size: the pages are readAll', async () => {
      const store = current();
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 4 })), { minLength: 0, maxLength: 10 }),
          fc.nat(40),
          fc.option(fc.nat(40), { nil: undefined }),
          fc.integer({ min: 1, max: 45 }),
          async (n, raw, start, maxCount, pageSize) => {
            const after = await mark(store);
            const streams = Array.from({ length: n }, () => uniqueStream('all-prop'));
            const ids = await appendAll(store, streams, raw.map(([s, size]) => [s % n, size] as const));
            const all = (await pages(store, { after, pageSize })).flat();
            expect(all.map((e) => e.id)).toEqual(ids);
            const from = all.length === 0 ? after : all[Math.min(start, all.length - 1)]!.position;
            await expectSameAsReadAll(store, { after: from, pageSize, ...(maxCount !== undefined ? { maxCount } : {}) });
          },
        ),
        { numRuns: Number(process.env.STEERLOG_PAGED_READ_RUNS ?? 15) },
      );
    }, 120_000);
  });
}
