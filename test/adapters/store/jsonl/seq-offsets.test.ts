import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { nodeFsOps, type FsOps } from '../../../../adapters/store/jsonl/fs-ops.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { collect, fileOf } from './support/verify.js';

/**
 * Reads by seq without re-reading: a read of a stream from revision r, in a fresh store instance, starts at most 256
 * lines before r (the sparse seq → offset index of the first read's index pass), and yields exactly what a read from
 * the start yields from r on.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-seq-offsets-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** node:fs, counting the bytes read from stream files. */
const countingFs = (): FsOps & { streamBytes: () => number } => {
  let bytes = 0;
  return {
    ...nodeFsOps,
    streamBytes: () => bytes,
    open: async (path, mode) => {
      const file = await nodeFsOps.open(path, mode);
      if (!path.includes('/streams/')) return file;
      return { ...file, read: async (b, o, l, p) => { const n = await file.read(b, o, l, p); bytes += n; return n; }, close: () => file.close() };
    },
  };
};

describe('reads by seq', () => {
  it('start near the revision asked for and yield what a full read yields from there', async () => {
    const dir = join(root, 'long');
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const payload = 'p'.repeat(2000);
    for (let b = 0; b < 30; b++) {
      const batch: NewEvent[] = Array.from({ length: 100 }, (_, i) => ({ id: `e${b * 100 + i}`, type: 't', time: b, data: { payload } }));
      await store.append('long', batch, 'any');
      await store.append(`other-${b % 3}`, [{ id: `o${b}`, type: 'o', time: b, data: {} }], 'any');
    }
    const all = await collect(store.read('long'));
    await store.close();
    expect(all).toHaveLength(3000);
    const fileBytes = statSync(fileOf(dir, 'long')).size;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3001 }), fc.integer({ min: 1, max: 300 }), async (from, maxCount) => {
        const fs = countingFs();
        const fresh = await openJsonlEventStore(dir, { readOnly: true, fs });
        try {
          const got = await collect(fresh.read('long', { from: BigInt(from), maxCount }));
          expect(got).toEqual(all.slice(from, from + maxCount));
          // from the line 256 × ⌊from / 256⌋ on: the lines up to `from`, the range asked for, and at most three 256 KiB
          // blocks besides (the tail check, the reads ahead; the lines are all the same length here) — the range, never
          // the whole file
          const lineBytes = fileBytes / 3000;
          const range = Math.min(3000, from + maxCount) - 256 * Math.floor(Math.min(from, 3000) / 256);
          if (from >= 1024) expect(fs.streamBytes()).toBeLessThanOrEqual((range + 2) * lineBytes + 3 * 256 * 1024);
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
