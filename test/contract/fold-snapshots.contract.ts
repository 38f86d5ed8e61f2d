import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { isFoldSnapshotSource, snapshotsNear, type FoldSnapshot, type FoldSnapshotSource } from '../../runtime/ports/fold-snapshots.js';
import { ev, uniqueStream } from './event-store.contract.js';

/**
 * The FoldSnapshotSource contract (runtime/ports/fold-snapshots.ts), for the stores that keep fold snapshots: what is
 * saved is loaded back in seq order, and `loadFoldSnapshotsNear` answers what `snapshotsNear` cuts from the whole
 * load, for any range.
 */
export function describeFoldSnapshotContract(name: string, current: () => EventStore): void {
  describe(`FoldSnapshotSource contract — ${name}`, () => {
    const source = (): EventStore & FoldSnapshotSource => {
      const store = current();
      if (!isFoldSnapshotSource(store)) throw new Error(`${name} does not keep fold snapshots`);
      return store;
    };
    const plain = (list: readonly FoldSnapshot[]): unknown => list.map((s) => ({ seq: s.seq, id: s.id, hash: s.hash, version: s.version, state: s.state }));

    it('keeps what is saved (in seq order), and the near ones of any range are the whole load cut by snapshotsNear', async () => {
      const store = source();
      const stream = uniqueStream('snap');
      await store.append(stream, [ev(`${stream}-0`)], 'no_stream');
      expect(await store.loadFoldSnapshots(stream)).toEqual([]);
      expect(await store.loadFoldSnapshotsNear(stream, { from: 0, to: 10 })).toEqual([]);
      const snapshots: FoldSnapshot[] = Array.from({ length: 40 }, (_, i) => ({ seq: i * 7 + 3, id: `e-${i}`, hash: (i * 7 + 3).toString(16).padStart(8, '0'), version: 2, state: { n: i, pad: 'x'.repeat((i * 37) % 300) } }));
      await store.saveFoldSnapshots(stream, snapshots);
      const all = await store.loadFoldSnapshots(stream);
      expect(plain(all)).toEqual(plain(snapshots));
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: 320 }), fc.nat({ max: 100 }), async (from, length) => {
          const range = { from, to: from + length };
          expect(plain(await store.loadFoldSnapshotsNear(stream, range))).toEqual(plain(snapshotsNear(all, range)));
        }),
        { numRuns: 60 },
      );
    });
  });
}
