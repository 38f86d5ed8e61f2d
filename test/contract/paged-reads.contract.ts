import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import type { EventStore, ReadPagesOptions, RecordedEvent } from '../../runtime/ports/event-store.js';
import { readStreamPages } from '../../runtime/ports/paged-reads.js';
import { collect, ev, uniqueStream } from './event-store.contract.js';

/**
 * Paged reads (EventStore.readPages, through `readStreamPages`: the store's own pages, or `read` batched for a store
 * without them): exactly the events of `read` with the same options, in non-empty pages of at most `pageSize`.
 */
export function describePagedReadContract(name: string, current: () => EventStore): void {
  describe(`paged reads — ${name}`, () => {
    let store: EventStore;
    let stream: string;
    const pages = (s: string, options?: ReadPagesOptions): Promise<(readonly RecordedEvent[])[]> => collect(() => readStreamPages(store, s, options));
    const revisions = (ps: (readonly RecordedEvent[])[]): bigint[] => ps.flat().map((e) => e.revision);
    /** The pages hold exactly what `read` yields with the same options, none empty, none larger than `pageSize`. */
    const expectSameAsRead = async (s: string, options: ReadPagesOptions): Promise<(readonly RecordedEvent[])[]> => {
      const ps = await pages(s, options);
      const { pageSize, ...readOptions } = options;
      expect(ps.flat()).toEqual(await collect(() => store.read(s, readOptions)));
      for (const p of ps) {
        expect(p.length).toBeGreaterThan(0);
        if (pageSize !== undefined) expect(p.length).toBeLessThanOrEqual(pageSize);
      }
      return ps;
    };

    beforeEach(async () => {
      store = current();
      stream = uniqueStream('paged');
      await store.append(stream, Array.from({ length: 10 }, (_, i) => ev(`p-${i}`, 'test/event', { i })), 'no_stream');
    });

    it('reads the exact events, in pages of at most pageSize, split where the page is full', async () => {
      const ps = await expectSameAsRead(stream, { pageSize: 3 });
      expect(ps.flat().map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => `p-${i}`));
      expect(ps.flat().map((e) => e.data)).toEqual(Array.from({ length: 10 }, (_, i) => ({ i })));
      expect(revisions(ps)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)));
      expect(ps.length).toBeGreaterThanOrEqual(4);
      expect(ps.map((p) => p.length)).toEqual([3, 3, 3, 1]);
    });

    it('a page larger than the stream holds the whole stream; the default page too', async () => {
      const ps = await expectSameAsRead(stream, { pageSize: 1000 });
      expect(ps.map((p) => p.length)).toEqual([10]);
      expect((await expectSameAsRead(stream, {})).map((p) => p.length)).toEqual([10]);
      expect((await expectSameAsRead(stream, { pageSize: 10 })).map((p) => p.length)).toEqual([10]);
    });

    it('from, maxCount and backwards: the events read would give', async () => {
      expect(revisions(await expectSameAsRead(stream, { from: 4n, pageSize: 4 }))).toEqual([4n, 5n, 6n, 7n, 8n, 9n]);
      expect(revisions(await expectSameAsRead(stream, { from: 2n, maxCount: 5, pageSize: 2 }))).toEqual([2n, 3n, 4n, 5n, 6n]);
      expect(revisions(await expectSameAsRead(stream, { maxCount: 4, pageSize: 4 }))).toEqual([0n, 1n, 2n, 3n]);
      expect(revisions(await expectSameAsRead(stream, { direction: 'backwards', pageSize: 4 }))).toEqual([9n, 8n, 7n, 6n, 5n, 4n, 3n, 2n, 1n, 0n]);
      expect(revisions(await expectSameAsRead(stream, { direction: 'backwards', from: 6n, maxCount: 5, pageSize: 2 }))).toEqual([6n, 5n, 4n, 3n, 2n]);
      expect(revisions(await expectSameAsRead(stream, { direction: 'backwards', from: 50n, maxCount: 2 }))).toEqual([9n, 8n]);
    });

    it('an absent stream, a start past the end and maxCount 0 yield no page', async () => {
      expect(await pages(uniqueStream('absent'), { pageSize: 5 })).toEqual([]);
      expect(await pages(uniqueStream('absent'))).toEqual([]);
      expect(await pages(stream, { from: 10n })).toEqual([]);
      expect(await pages(stream, { maxCount: 0 })).toEqual([]);
    });

    it('a pageSize below 1 reads pages of one event; a fractional one is rounded down; Infinity is the store\u2019s own page', async () => {
      expect((await pages(stream, { pageSize: 0 })).map((p) => p.length)).toEqual(Array.from({ length: 10 }, () => 1));
      expect((await pages(stream, { pageSize: 4.9 })).map((p) => p.length)).toEqual([4, 4, 2]);
      expect((await expectSameAsRead(stream, { pageSize: Number.POSITIVE_INFINITY })).map((p) => p.length)).toEqual([10]);
    });

    it('pages are the reader\u2019s: emptying one changes nothing the store hands out next', async () => {
      const first = await pages(stream, { pageSize: 4 });
      for (const p of first) (p as RecordedEvent[]).length = 0;
      expect((await pages(stream, { pageSize: 4 })).flat().map((e) => e.id)).toEqual(Array.from({ length: 10 }, (_, i) => `p-${i}`));
      expect((await collect(() => store.read(stream))).length).toBe(10);
    });

    it('reads events appended after the first page was handed out, as read does', async () => {
      const got: string[] = [];
      let appended = false;
      for await (const page of readStreamPages(store, stream, { pageSize: 5 })) {
        got.push(...page.map((e) => e.id));
        if (!appended) {
          appended = true;
          await store.append(stream, [ev('late')], 9n);
        }
      }
      // a read takes a snapshot or follows the tail, by store: either way the first 10, in order, and no other
      expect(got.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `p-${i}`));
      expect(got.slice(10)).toEqual(got.length === 10 ? [] : ['late']);
    });

    it('property: the pages of any stream, for any options and page size, are exactly what read yields', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 30 }),
          fc.record(
            {
              from: fc.bigInt({ min: 0n, max: 35n }),
              maxCount: fc.integer({ min: 0, max: 40 }),
              direction: fc.constantFrom('forwards' as const, 'backwards' as const),
              pageSize: fc.integer({ min: 1, max: 40 }),
            },
            { requiredKeys: [] },
          ),
          fc.array(fc.string({ maxLength: 300 }), { minLength: 30, maxLength: 30 }),
          async (n, options, texts) => {
            const s = uniqueStream('paged-prop');
            if (n > 0) await store.append(s, Array.from({ length: n }, (_, i) => ev(`${s}-${i}`, 'test/event', { i, t: texts[i] })), 'no_stream');
            await expectSameAsRead(s, options);
          },
        ),
        { numRuns: Number(process.env.STEERLOG_PAGED_READ_RUNS ?? 25) },
      );
    }, 120_000);
  });
}
