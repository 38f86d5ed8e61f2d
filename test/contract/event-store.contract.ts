import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventStore, NewEvent, RecordedEvent, SubscriptionMessage } from '../../runtime/ports/event-store.js';
import {
  isConcurrencyError,
  isDuplicateEventIdError,
  isEventTooLargeError,
  isInvalidEventError,
  isInvalidStreamIdError,
  type ConcurrencyError,
} from '../../runtime/ports/store-errors.js';
import { eventSizeBytes } from '../../runtime/ports/store-validation.js';
import { describePagedReadContract } from './paged-reads.contract.js';
import { describePartitionedReadsContract } from './partitioned-reads.contract.js';
import { describeReadAllPagesContract } from './read-all-pages.contract.js';
import { describeStreamDeletionContract } from './stream-deletion.contract.js';
import { describeFoldSnapshotContract } from './fold-snapshots.contract.js';
import { expectBigStreamReadsBack } from './big-stream.contract.js';

/** How the shared contract suite gets stores of one kind. */
export interface EventStoreHarness {
  /** A fresh, empty store (or one whose stream names never collide with earlier tests). */
  create(): Promise<EventStore>;
  /**
   * A second, independent handle on the same data as `store` (another process-like writer: a second pool,
   * a second file handle). Used by the racing-writers test. Defaults to sharing `store`.
   */
  openPeer?(store: EventStore): Promise<EventStore>;
  /**
   * Events in the big-stream test. The full size (100,000) runs in the e2e step (test/contract/big-stream.test.ts),
   * so that `npm test` stays under 3 minutes. @defaultValue 20_000
   */
  readonly bigStreamEvents?: number;
  /** Largest event the store is configured to accept, to test the oversized refusal. @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** Run the StreamDeletion contract too (test/contract/stream-deletion.contract.ts). @defaultValue true */
  readonly deletion?: boolean;
  /** The store keeps fold snapshots: run the FoldSnapshotSource contract too (test/contract/fold-snapshots.contract.ts). */
  readonly foldSnapshots?: boolean;
  /** The store filters global reads by `partition` (test/contract/partitioned-reads.contract.ts); false: it ignores it. @defaultValue true */
  readonly partitionedReads?: boolean;
}

let counter = 0;
/** Stream names unique per test, so stores that share a database between tests stay independent. */
export const uniqueStream = (prefix = 'session'): string =>
  `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export const ev = (id: string, type = 'test/event', data: unknown = { id }): NewEvent => ({ id, type, time: 1_700_000_000_000, data });
const evs = (prefix: string, n: number): NewEvent[] => Array.from({ length: n }, (_, i) => ev(`${prefix}-${i}`));

export const collect = async <T>(iterable: () => AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of iterable()) out.push(x);
  return out;
};

/** The error `fn` rejects with (fails the test if it resolves). */
export const rejection = async (fn: () => Promise<unknown>): Promise<unknown> => {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
};

/** Pulls messages from a subscription until `predicate` holds for the collected list. */
const take = async (
  iterator: AsyncIterator<SubscriptionMessage>,
  until: (got: SubscriptionMessage[]) => boolean,
): Promise<SubscriptionMessage[]> => {
  const got: SubscriptionMessage[] = [];
  while (!until(got)) {
    const next = await iterator.next();
    if (next.done) break;
    got.push(next.value);
  }
  return got;
};
const eventIds = (msgs: SubscriptionMessage[]): string[] =>
  msgs.flatMap((m) => (m.kind === 'event' ? [m.event.id] : ['<caught-up>']));

export function describeEventStoreContract(name: string, harness: EventStoreHarness): void {
  describe(`EventStore contract — ${name}`, () => {
    let store: EventStore;
    let stream: string;
    beforeEach(async () => {
      store = await harness.create();
      stream = uniqueStream();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('expected revision', () => {
      it('no_stream creates a stream; revisions start at 0 and are contiguous', async () => {
        expect(await store.revision(stream)).toBe('no_stream');
        const r = await store.append(stream, evs('a', 3), 'no_stream');
        expect(r.nextExpectedRevision).toBe(2n);
        const read = await collect(() => store.read(stream));
        expect(read.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expect(read.map((e) => e.id)).toEqual(['a-0', 'a-1', 'a-2']);
        expect(await store.revision(stream)).toBe(2n);
      });

      it('no_stream on an existing stream is a ConcurrencyError with the actual revision', async () => {
        await store.append(stream, evs('a', 2), 'no_stream');
        const e = (await rejection(() => store.append(stream, [ev('b')], 'no_stream'))) as ConcurrencyError;
        expect(isConcurrencyError(e)).toBe(true);
        expect(e.stream).toBe(stream);
        expect(e.expected).toBe('no_stream');
        expect(e.actual).toBe(1n);
        expect((await collect(() => store.read(stream))).length).toBe(2);
      });

      it('stream_exists refuses an absent stream and accepts an existing one', async () => {
        const e = (await rejection(() => store.append(stream, [ev('a')], 'stream_exists'))) as ConcurrencyError;
        expect(isConcurrencyError(e)).toBe(true);
        expect(e.actual).toBe('no_stream');
        expect(await store.revision(stream)).toBe('no_stream');
        await store.append(stream, [ev('b')], 'any');
        const r = await store.append(stream, [ev('c')], 'stream_exists');
        expect(r.nextExpectedRevision).toBe(1n);
      });

      it('any appends whatever the state', async () => {
        expect((await store.append(stream, [ev('a')], 'any')).nextExpectedRevision).toBe(0n);
        expect((await store.append(stream, [ev('b')], 'any')).nextExpectedRevision).toBe(1n);
      });

      it('an exact revision appends; a stale one is refused and writes nothing', async () => {
        await store.append(stream, evs('a', 2), 'no_stream');
        const r = await store.append(stream, [ev('b')], 1n);
        expect(r.nextExpectedRevision).toBe(2n);
        const e = (await rejection(() => store.append(stream, [ev('c')], 1n))) as ConcurrencyError;
        expect(isConcurrencyError(e)).toBe(true);
        expect(e.expected).toBe(1n);
        expect(e.actual).toBe(2n);
        const e2 = (await rejection(() => store.append(stream, [ev('d')], 7n))) as ConcurrencyError;
        expect(e2.actual).toBe(2n);
        expect((await collect(() => store.read(stream))).map((x) => x.id)).toEqual(['a-0', 'a-1', 'b']);
      });

      it('an exact revision on an absent stream is refused with actual no_stream', async () => {
        const e = (await rejection(() => store.append(stream, [ev('a')], 0n))) as ConcurrencyError;
        expect(isConcurrencyError(e)).toBe(true);
        expect(e.actual).toBe('no_stream');
      });
    });

    describe('atomicity and idempotency', () => {
      it('a batch with one bad event writes none of it', async () => {
        await store.append(stream, [ev('a')], 'no_stream');
        const bad: NewEvent[] = [ev('b'), { ...ev('c'), data: { x: Number.NaN } }, ev('d')];
        const e = await rejection(() => store.append(stream, bad, 0n));
        expect(isInvalidEventError(e)).toBe(true);
        expect((await collect(() => store.read(stream))).map((x) => x.id)).toEqual(['a']);
        expect(await store.revision(stream)).toBe(0n);
      });

      it('re-appending the same ids is a no-op that returns the same revision', async () => {
        const first = await store.append(stream, evs('a', 3), 'no_stream');
        const again = await store.append(stream, evs('a', 3), 'no_stream');
        expect(again.nextExpectedRevision).toBe(first.nextExpectedRevision);
        expect((await collect(() => store.read(stream))).length).toBe(3);
        const tail = await store.append(stream, [ev('b')], 2n);
        expect(tail.nextExpectedRevision).toBe(3n);
        await store.append(stream, [ev('b')], 2n);
        expect((await collect(() => store.read(stream))).map((x) => x.id)).toEqual(['a-0', 'a-1', 'a-2', 'b']);
      });

      it('a batch that repeats only some stored ids, or one id twice, is refused whole', async () => {
        await store.append(stream, evs('a', 2), 'no_stream');
        const mixed = await rejection(() => store.append(stream, [ev('a-1'), ev('new')], 'any'));
        expect(isDuplicateEventIdError(mixed)).toBe(true);
        const reordered = await rejection(() => store.append(stream, [ev('a-1'), ev('a-0')], 'any'));
        expect(isDuplicateEventIdError(reordered)).toBe(true);
        const twice = await rejection(() => store.append(stream, [ev('x'), ev('x')], 'any'));
        expect(isDuplicateEventIdError(twice)).toBe(true);
        expect((await collect(() => store.read(stream))).map((x) => x.id)).toEqual(['a-0', 'a-1']);
      });

      it('keeps data, type, time and ignorable exactly', async () => {
        const data = { text: 'héllo ✓ \u2028', n: 1.5, nested: [1, { b: null, t: true }], empty: {} };
        await store.append(stream, [{ id: 'x', type: 'user/message', time: 1_234, data, ignorable: true }, ev('y')], 'no_stream');
        const [x, y] = await collect(() => store.read(stream));
        expect(x).toMatchObject({ id: 'x', type: 'user/message', time: 1_234, data, ignorable: true, stream, revision: 0n });
        expect(y!.ignorable).toBeUndefined();
      });

      it('an empty batch writes nothing and still checks the expected revision', async () => {
        const e = await rejection(() => store.append(stream, [], 'stream_exists'));
        expect(isConcurrencyError(e)).toBe(true);
        await store.append(stream, [], 'no_stream');
        expect(await store.revision(stream)).toBe('no_stream');
      });
    });

    describe('provenance and chain hash', () => {
      it('keeps metadata and hash verbatim, in stream reads and in the global order; absent ones stay absent', async () => {
        const hash = 'ab'.repeat(32);
        const metadata = { actor: 'user:ana', correlationId: 'req-1', causationId: 'evt-0', tenant: { id: 7, tags: ['a', 'é\u2028'] } };
        await store.append(stream, [{ ...ev('m-0'), metadata, hash }, ev('m-1')], 'no_stream');
        const got = await collect(() => store.read(stream));
        expect(got[0]).toMatchObject({ id: 'm-0', metadata, hash });
        expect(got[1]!.metadata).toBeUndefined();
        expect(got[1]!.hash).toBeUndefined();
        const all = (await collect(() => store.readAll())).filter((e) => e.stream === stream);
        expect(all[0]).toMatchObject({ metadata, hash });
      });
      it('refuses a hash that is not 64 lowercase hex digits and metadata that is not a JSON object', async () => {
        expect(isInvalidEventError(await rejection(() => store.append(stream, [{ ...ev('h'), hash: 'XYZ' }], 'any')))).toBe(true);
        expect(isInvalidEventError(await rejection(() => store.append(stream, [{ ...ev('h'), metadata: [1] as never }], 'any')))).toBe(true);
        expect(await store.revision(stream)).toBe('no_stream');
      });
    });

    describe('reads', () => {
      beforeEach(async () => {
        await store.append(stream, evs('e', 10), 'no_stream');
      });
      it('forwards from a revision with maxCount', async () => {
        const got = await collect(() => store.read(stream, { from: 3n, maxCount: 4 }));
        expect(got.map((e) => e.revision)).toEqual([3n, 4n, 5n, 6n]);
      });
      it('backwards from the end and from a revision', async () => {
        expect((await collect(() => store.read(stream, { direction: 'backwards', maxCount: 3 }))).map((e) => e.revision)).toEqual([9n, 8n, 7n]);
        expect((await collect(() => store.read(stream, { direction: 'backwards', from: 2n }))).map((e) => e.revision)).toEqual([2n, 1n, 0n]);
      });
      it('past the end and absent streams yield nothing', async () => {
        expect(await collect(() => store.read(stream, { from: 10n }))).toEqual([]);
        expect(await collect(() => store.read(uniqueStream('absent')))).toEqual([]);
      });
    });

    describePagedReadContract(name, () => store);
    describeReadAllPagesContract(name, harness, () => store);
    describePartitionedReadsContract(name, harness, () => store);

    describe('subscriptions', () => {
      it('catch-up then live, with one caught-up marker, no gap and no duplicate', async () => {
        await store.append(stream, evs('h', 3), 'no_stream');
        const ac = new AbortController();
        const it = store.subscribe(stream, { signal: ac.signal })[Symbol.asyncIterator]();
        const first = await take(it, (g) => g.some((m) => m.kind === 'caught-up'));
        expect(eventIds(first)).toEqual(['h-0', 'h-1', 'h-2', '<caught-up>']);
        const appends = (async () => {
          for (let i = 0; i < 20; i++) await store.append(stream, [ev(`l-${i}`)], 'any');
        })();
        const live = await take(it, (g) => g.length >= 20);
        await appends;
        expect(eventIds(live)).toEqual(Array.from({ length: 20 }, (_, i) => `l-${i}`));
        expect(live.map((m) => (m.kind === 'event' ? m.event.revision : -1n))).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 3)));
        ac.abort();
        await it.return?.();
      });

      it('appends racing the switch from catch-up to live are delivered once each', async () => {
        await store.append(stream, evs('h', 5), 'no_stream');
        const ac = new AbortController();
        const it = store.subscribe(stream, { signal: ac.signal })[Symbol.asyncIterator]();
        const appends = (async () => {
          for (let i = 0; i < 30; i++) await store.append(stream, [ev(`r-${i}`)], 'any');
        })();
        const got = await take(it, (g) => g.filter((m) => m.kind === 'event').length >= 35 && g.some((m) => m.kind === 'caught-up'));
        await appends;
        const ids = got.filter((m) => m.kind === 'event').map((m) => (m as { event: RecordedEvent }).event.id);
        expect(ids).toEqual([...evs('h', 5).map((e) => e.id), ...Array.from({ length: 30 }, (_, i) => `r-${i}`)]);
        expect(got.filter((m) => m.kind === 'caught-up').length).toBe(1);
        ac.abort();
        await it.return?.();
      });

      it('subscribes from a revision, and to a stream that does not exist yet', async () => {
        const ac = new AbortController();
        const it = store.subscribe(stream, { from: 2n, signal: ac.signal })[Symbol.asyncIterator]();
        const empty = await take(it, (g) => g.length >= 1);
        expect(eventIds(empty)).toEqual(['<caught-up>']);
        await store.append(stream, evs('s', 4), 'no_stream');
        const got = await take(it, (g) => g.length >= 2);
        expect(eventIds(got)).toEqual(['s-2', 's-3']);
        ac.abort();
        await it.return?.();
      });

      it('aborting ends the subscription', async () => {
        const ac = new AbortController();
        const it = store.subscribe(stream, { signal: ac.signal })[Symbol.asyncIterator]();
        await take(it, (g) => g.length >= 1);
        const pending = it.next();
        ac.abort();
        expect((await pending).done).toBe(true);
      });
    });

    describe('global order', () => {
      it('readAll returns every stream in commit order; after and maxCount page through it', async () => {
        const a = uniqueStream('all-a');
        const b = uniqueStream('all-b');
        await store.append(a, [ev('a1')], 'no_stream');
        await store.append(b, [ev('b1'), ev('b2')], 'no_stream');
        await store.append(a, [ev('a2')], 0n);
        const mine = (await collect(() => store.readAll())).filter((e) => e.stream === a || e.stream === b);
        expect(mine.map((e) => e.id)).toEqual(['a1', 'b1', 'b2', 'a2']);
        const positions = mine.map((e) => e.position);
        expect([...positions].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))).toEqual(positions);
        expect(new Set(positions).size).toBe(4);
        const page = await collect(() => store.readAll({ after: mine[0]!.position, maxCount: 2 }));
        expect(page.map((e) => e.id)).toEqual(['b1', 'b2']);
      });

      it('subscribeAll is catch-up then live across streams', async () => {
        const a = uniqueStream('sa');
        await store.append(a, [ev('x1')], 'no_stream');
        const [head] = await collect(() => store.readAll({ maxCount: 1 }));
        const all = await collect(() => store.readAll());
        const ac = new AbortController();
        const it = store.subscribeAll({ after: all.at(-1)!.position, signal: ac.signal })[Symbol.asyncIterator]();
        expect(head).toBeDefined();
        const caught = await take(it, (g) => g.some((m) => m.kind === 'caught-up'));
        expect(eventIds(caught)).toEqual(['<caught-up>']);
        const b = uniqueStream('sb');
        await store.append(b, [ev('y1')], 'no_stream');
        await store.append(a, [ev('x2')], 0n);
        const live = await take(it, (g) => eventIds(g).includes('x2'));
        expect(eventIds(live).filter((id) => id === 'y1' || id === 'x2')).toEqual(['y1', 'x2']);
        ac.abort();
        await it.return?.();
      });
    });

    describe('concurrency', () => {
      it('N writers racing with the same expected revision: exactly one wins each revision', async () => {
        const peer = harness.openPeer ? await harness.openPeer(store) : store;
        try {
          await store.append(stream, [ev('base')], 'no_stream');
          for (let round = 0; round < 5; round++) {
            const expected = BigInt(round);
            const writers = Array.from({ length: 6 }, (_, w) =>
              (w % 2 === 0 ? store : peer).append(stream, [ev(`r${round}-w${w}`)], expected),
            );
            const results = await Promise.allSettled(writers);
            const won = results.filter((r) => r.status === 'fulfilled');
            const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
            expect(won.length).toBe(1);
            expect(lost.every((r) => isConcurrencyError(r.reason))).toBe(true);
          }
          const all = await collect(() => store.read(stream));
          expect(all.map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
        } finally {
          if (peer !== store) await peer.close();
        }
      });
    });

    describe('bad input', () => {
      const hostile: unknown[] = ['', 'a\u0000b', 'tab\there', 'line\nbreak', 'x'.repeat(201), '\ud800', 'a\udc00', 42, null];
      it.each(hostile.map((h) => [JSON.stringify(h)?.slice(0, 20) ?? String(h), h]))('refuses stream id %s', async (_, id) => {
        const e = await rejection(() => store.append(id as string, [ev('a')], 'any'));
        expect(isInvalidStreamIdError(e)).toBe(true);
      });

      it('accepts ids that look like paths without escaping anything', async () => {
        for (const id of ['../../etc/passwd', 'a/b', '.', '..', 'CON', 'ünï code ✓', 'A', 'a']) {
          await store.append(id + stream, [ev('p')], 'any');
          const got = await collect(() => store.read(id + stream));
          expect(got.map((e) => e.stream)).toEqual([id + stream]);
        }
      });

      it.each([
        ['NaN', { x: Number.NaN }],
        ['undefined', { x: undefined }],
        ['bigint', { x: 1n }],
        ['Date', { x: new Date(0) }],
        ['-0', { x: -0 }],
      ])('refuses non-JSON data (%s)', async (_, data) => {
        const e = await rejection(() => store.append(stream, [{ ...ev('a'), data }], 'any'));
        expect(isInvalidEventError(e)).toBe(true);
        expect(await store.revision(stream)).toBe('no_stream');
      });

      it('refuses malformed events and expected revisions', async () => {
        expect(isInvalidEventError(await rejection(() => store.append(stream, [{ ...ev('a'), id: '' }], 'any')))).toBe(true);
        expect(isInvalidEventError(await rejection(() => store.append(stream, [{ ...ev('a'), type: '' }], 'any')))).toBe(true);
        expect(isInvalidEventError(await rejection(() => store.append(stream, [{ ...ev('a'), time: Number.NaN }], 'any')))).toBe(true);
        expect(isInvalidEventError(await rejection(() => store.append(stream, [ev('a')], -1n)))).toBe(true);
        expect(isInvalidEventError(await rejection(() => store.append(stream, [ev('a')], 'latest' as never)))).toBe(true);
        expect(await store.revision(stream)).toBe('no_stream');
      });

      it('exposes its maximum event size: an event of exactly maxEventBytes (as eventSizeBytes measures it) is stored, one byte more is refused', async () => {
        const limit = store.maxEventBytes;
        expect(limit).toBe(harness.maxEventBytes ?? 1024 * 1024);
        const sized = (id: string, bytes: number): NewEvent => {
          const base = { ...ev(id), data: { s: '' } };
          return { ...base, data: { s: 'x'.repeat(bytes - eventSizeBytes(base)) } };
        };
        const exact = sized('exact', limit);
        expect(eventSizeBytes(exact)).toBe(limit);
        await store.append(stream, [exact], 'no_stream');
        const over = sized('over', limit + 1);
        const e = await rejection(() => store.append(stream, [over], 0n));
        expect(isEventTooLargeError(e)).toBe(true);
        expect(e).toMatchObject({ bytes: limit + 1, limit });
        expect(await store.revision(stream)).toBe(0n);
      });

      it('refuses an oversized event with its size and the limit', async () => {
        const limit = harness.maxEventBytes ?? 1024 * 1024;
        const e = await rejection(() => store.append(stream, [{ ...ev('big'), data: { s: 'x'.repeat(limit + 1) } }], 'any'));
        expect(isEventTooLargeError(e)).toBe(true);
        expect(await store.revision(stream)).toBe('no_stream');
      });
    });

    describe('big streams', () => {
      const n = harness.bigStreamEvents ?? 20_000;
      it(`reads ${n} events back in order, page by page`, async () => {
        await expectBigStreamReadsBack(store, stream, n);
      }, 300_000);
    });

    if (harness.deletion !== false) describeStreamDeletionContract(name, harness, () => store);
    if (harness.foldSnapshots === true) describeFoldSnapshotContract(name, () => store);
  });
}
