import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { nodeFsOps, type FsOps } from '../../../../adapters/store/jsonl/fs-ops.js';
import { seekLine } from '../../../../adapters/store/jsonl/line-seek.js';
import { decodeLineAt } from '../../../../adapters/store/jsonl/line-codec.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { collect, fileOf } from './support/verify.js';

/**
 * The seek of a read by seq (adapters/store/jsonl/line-seek.ts): a bisection of a stream file's committed bytes finds
 * a line at or just before the revision asked for, lines of any length; a fresh store instance seeded by the session
 * catalog reads a deep range of a long stream without a pass over the whole index.
 */
const root = mkdtempSync(join(tmpdir(), 'steerlog-line-seek-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** node:fs, counting the bytes read from `global.idx`. */
const countingFs = (): FsOps & { indexBytes: () => number } => {
  let bytes = 0;
  return {
    ...nodeFsOps,
    indexBytes: () => bytes,
    open: async (path, mode) => {
      const file = await nodeFsOps.open(path, mode);
      if (!path.endsWith('global.idx')) return file;
      return { ...file, read: async (b, o, l, p) => { const n = await file.read(b, o, l, p); bytes += n; return n; }, close: () => file.close() };
    },
  };
};

/** A store with one long stream of lines of mixed lengths (some longer than a first probe, one past 64 KiB) among short streams. */
const writeStore = async (dir: string, events: number): Promise<void> => {
  const store = await openJsonlEventStore(dir, { durability: 'none' });
  const size = (i: number) => (i % 97 === 0 ? 9000 : i % 13 === 0 ? 3000 : 40 + (i % 7) * 30) + (i === 1500 ? 70_000 : 0);
  for (let b = 0; b < events / 100; b++) {
    const batch: NewEvent[] = Array.from({ length: 100 }, (_, k) => ({ id: `e${b * 100 + k}`, type: 't', time: b, data: { payload: 'p'.repeat(size(b * 100 + k)) } }));
    await store.append('long', batch, 'any');
    await store.append(`other-${b % 5}`, [{ id: `o${b}`, type: 'o', time: b, data: {} }], 'any');
  }
  await store.close();
};

describe('the seek of a read by seq', () => {
  it('finds a committed line at or just before any revision, whatever the lengths of the lines', async () => {
    const dir = join(root, 'mixed');
    await writeStore(dir, 3000);
    const path = fileOf(dir, 'long');
    const end = statSync(path).size;
    const fd = openSync(path, 'r');
    try {
      const bytes = Buffer.alloc(end);
      readSync(fd, bytes, 0, end, 0);
      const headerEnd = bytes.indexOf(0x0a) + 1;
      const file = await nodeFsOps.open(path, 'read');
      try {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 0, max: 2999 }), fc.integer({ min: 0, max: 64 }), async (target, near) => {
            const found = await seekLine(file, { headerEnd, end }, target, near);
            if (found === undefined) return;
            expect(found.rev).toBeLessThanOrEqual(target);
            expect(found.offset === headerEnd || bytes[found.offset - 1] === 0x0a).toBe(true);
            const decoded = decodeLineAt(bytes, found.offset, bytes.indexOf(0x0a, found.offset));
            expect(typeof decoded !== 'string' && decoded.kind === 'event' && decoded.event.rev).toBe(found.rev);
          }),
          { numRuns: 200 },
        );
        // a deep target is always found near (the lines there fit a probe)
        expect((await seekLine(file, { headerEnd, end }, 2900, 16))!.rev).toBeGreaterThanOrEqual(2900 - 200);
      } finally {
        await file.close();
      }
    } finally {
      closeSync(fd);
    }
  });

  it('lets a fresh instance seeded by the catalog read a deep range without a pass over the whole index', async () => {
    const dir = join(root, 'deep');
    await writeStore(dir, 6000);
    const all = await (async () => {
      const s = await openJsonlEventStore(dir, { readOnly: true });
      try {
        return await collect(s.read('long'));
      } finally {
        await s.close();
      }
    })();
    const indexBytes = statSync(join(dir, 'global.idx')).size;
    for (const from of [5800, 3000, 1024, 4444]) {
      const fs = countingFs();
      const fresh = await openJsonlEventStore(dir, { readOnly: true, fs });
      try {
        const got = await collect(fresh.read('long', { from: BigInt(from), maxCount: 50 }));
        expect(got).toEqual(all.slice(from, from + 50));
        // the seed's look at the index, not a pass over it: far less than the index (6,060 records of 80 bytes)
        expect(fs.indexBytes()).toBeLessThan(indexBytes / 4);
      } finally {
        await fresh.close();
      }
    }
  });
});
