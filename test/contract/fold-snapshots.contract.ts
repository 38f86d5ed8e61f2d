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

    it('appends past the last one kept: the load is what was saved, then the appended ones above it; the others are skipped', async () => {
      const store = source();
      if (store.appendFoldSnapshots === undefined) throw new Error(`${name} keeps fold snapshots but cannot append them`);
      const stream = uniqueStream('snap-append');
      await store.append(stream, [ev(`${stream}-0`)], 'no_stream');
      const snap = (seq: number, tag = ''): FoldSnapshot => ({ seq, id: `e-${seq}${tag}`, hash: seq.toString(16).padStart(8, '0'), version: 2, state: { seq, tag, pad: 'y'.repeat((seq * 13) % 200) } });
      // into nothing: the file or row is made; each append answers the seq of the last one kept after it
      expect(await store.appendFoldSnapshots(stream, [snap(3), snap(7)])).toBe(7);
      expect(plain(await store.loadFoldSnapshots(stream))).toEqual(plain([snap(3), snap(7)]));
      // past the last: added; at or below it: skipped, the kept ones unchanged
      expect(await store.appendFoldSnapshots(stream, [snap(5, '-late'), snap(7, '-again'), snap(11), snap(15)])).toBe(15);
      expect(plain(await store.loadFoldSnapshots(stream))).toEqual(plain([snap(3), snap(7), snap(11), snap(15)]));
      expect(await store.appendFoldSnapshots(stream, [snap(2, '-low')])).toBe(15);
      expect(plain(await store.loadFoldSnapshots(stream))).toEqual(plain([snap(3), snap(7), snap(11), snap(15)]));
      // after a replacement, appends go past the replacement's last one
      await store.saveFoldSnapshots(stream, [snap(1)]);
      expect(await store.appendFoldSnapshots(stream, [snap(9), snap(40)])).toBe(40);
      const all = await store.loadFoldSnapshots(stream);
      expect(plain(all)).toEqual(plain([snap(1), snap(9), snap(40)]));
      for (const range of [{ from: 0, to: 0 }, { from: 10, to: 10 }, { from: 2, to: 41 }, { from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER }]) {
        expect(plain(await store.loadFoldSnapshotsNear(stream, range))).toEqual(plain(snapshotsNear(all, range)));
      }
    });
  });
}
