import { describe, expect, it } from 'vitest';
import { streamRevision, type EventStore } from '../../runtime/ports/event-store.js';
import { isConcurrencyError, isStreamDeletedError, type ConcurrencyError } from '../../runtime/ports/store-errors.js';
import { canDeleteStreams, type DeletableEventStore } from '../../runtime/ports/stream-deletion.js';
import type { EventStoreHarness } from './event-store.contract.js';
import { collect, ev, rejection, uniqueStream } from './event-store.contract.js';

/** The StreamDeletion contract (runtime/ports/stream-deletion.ts): the same rules for every store that deletes. */
export function describeStreamDeletionContract(name: string, harness: EventStoreHarness, current: () => EventStore): void {
  describe(`StreamDeletion contract — ${name}`, () => {
    const deletable = (): DeletableEventStore => {
      const store = current();
      if (!canDeleteStreams(store)) throw new Error(`${name} does not implement StreamDeletion`);
      return store;
    };
    const fill = async (store: EventStore, stream: string, n: number): Promise<void> => {
      await store.append(stream, Array.from({ length: n }, (_, i) => ev(`${stream}-${i}`)), 'no_stream');
    };
    const idsIn = async (store: EventStore, streams: readonly string[]): Promise<string[]> =>
      (await collect(() => store.readAll())).filter((e) => streams.includes(e.stream)).map((e) => e.id);

    it('deletes the whole stream: read is empty, revision no_stream, readAll skips it and keeps the others in place', async () => {
      const store = deletable();
      const [a, b] = [uniqueStream('del-a'), uniqueStream('del-b')];
      await fill(store, a, 3);
      await fill(store, b, 2);
      const before = (await collect(() => store.readAll())).filter((e) => e.stream === b).map((e) => [e.id, e.position]);
      await store.deleteStream(a, streamRevision(2));
      expect(await collect(() => store.read(a))).toEqual([]);
      expect(await store.revision(a)).toBe('no_stream');
      const after = (await collect(() => store.readAll())).filter((e) => e.stream === a || e.stream === b).map((e) => [e.id, e.position]);
      expect(after).toEqual(before);
      expect((await collect(() => store.read(b))).map((e) => e.id)).toEqual([`${b}-0`, `${b}-1`]);
    });

    it('refuses a stale expected revision (ConcurrencyError, nothing deleted) and an absent stream', async () => {
      const store = deletable();
      const a = uniqueStream('del-stale');
      await fill(store, a, 3);
      const e = (await rejection(() => store.deleteStream(a, streamRevision(1)))) as ConcurrencyError;
      expect(isConcurrencyError(e)).toBe(true);
      expect(e.actual).toBe(2n);
      expect((await collect(() => store.read(a))).length).toBe(3);
      const absent = (await rejection(() => store.deleteStream(uniqueStream('del-absent'), streamRevision(0)))) as ConcurrencyError;
      expect(isConcurrencyError(absent)).toBe(true);
      expect(absent.actual).toBe('no_stream');
    });

    it('retires the id: append and a second delete fail with stream-deleted', async () => {
      const store = deletable();
      const a = uniqueStream('del-retired');
      await fill(store, a, 1);
      await store.deleteStream(a, streamRevision(0));
      expect(isStreamDeletedError(await rejection(() => store.append(a, [ev(`${a}-new`)], 'any')))).toBe(true);
      expect(isStreamDeletedError(await rejection(() => store.append(a, [ev(`${a}-new2`)], 'no_stream')))).toBe(true);
      expect(isStreamDeletedError(await rejection(() => store.deleteStream(a, streamRevision(0))))).toBe(true);
      expect(await idsIn(store, [a])).toEqual([]);
    });

    it.skipIf(!harness.openPeer)('a second instance on the same data sees the deletion', async () => {
      const store = deletable();
      const a = uniqueStream('del-peer');
      const b = uniqueStream('del-peer-keep');
      await fill(store, a, 2);
      await fill(store, b, 1);
      const peer = await harness.openPeer!(store);
      try {
        expect((await collect(() => peer.read(a))).length).toBe(2);
        await store.deleteStream(a, streamRevision(1));
        expect(await collect(() => peer.read(a))).toEqual([]);
        expect(await peer.revision(a)).toBe('no_stream');
        expect(await idsIn(peer, [a, b])).toEqual([`${b}-0`]);
        expect(isStreamDeletedError(await rejection(() => peer.append(a, [ev(`${a}-again`)], 'any')))).toBe(true);
      } finally {
        await peer.close();
      }
    });
  });
}
