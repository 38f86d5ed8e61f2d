import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import type { NewEvent, RecordedEvent } from '../../../../runtime/ports/event-store.js';
import { isStoreCorruptError, type StoreCorruptError } from '../../../../runtime/ports/store-errors.js';
import { collect, drain, fileOf } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-paged-'));
  dirs.push(d);
  return d;
};
const ev = (id: string, data: unknown = { id }): NewEvent => ({ id, type: 'unit/test', time: 5, data });
const KiB = 1024;


describe('JSONL paged reads', () => {
  it('a page is the lines of one 256 KiB read: lines split across reads and lines longer than a read come whole', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    // sizes around and above the read size, so lines straddle reads and some span several
    const sizes = [10, 100 * KiB, 200 * KiB, 5, 300 * KiB, 700 * KiB, 1, 255 * KiB, 256 * KiB, 3, 2];
    const events = sizes.map((n, i) => ev(`e${i}`, { i, s: 'é'.repeat(Math.floor(n / 2)) }));
    for (const e of events) await store.append('s', [e], 'any');
    const pages = await collect(store.readPages('s'));
    expect(pages.flat()).toEqual(await collect(store.read('s')));
    expect(pages.flat().map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(pages.flat().map((e) => e.data)).toEqual(events.map((e) => e.data));
    expect(pages.length).toBeGreaterThan(3); // ~2 MiB of lines: several reads, so several pages
    for (const p of pages) expect(p.length).toBeGreaterThan(0);
    // every page is frozen through and through, like read's events
    for (const e of pages.flat()) {
      expect(Object.isFrozen(e)).toBe(true);
      expect(Object.isFrozen(e.data)).toBe(true);
    }
    // from the middle, through a remembered line boundary and without
    expect((await collect(store.readPages('s', { from: 5n }))).flat().map((e) => e.id)).toEqual(events.slice(5).map((e) => e.id));
    await store.close();
    const reopened = await openJsonlEventStore(dir, { readOnly: true });
    const small = await collect(reopened.readPages('s', { from: 7n, pageSize: 2 }));
    expect(small.flat().map((e) => e.id)).toEqual(['e7', 'e8', 'e9', 'e10']);
    // at most pageSize, and cut where a read ends too: e7 (255 KiB) and e8 (256 KiB) do not end in one read
    expect(small.map((p) => p.map((e) => e.id))).toEqual([['e7'], ['e8', 'e9'], ['e10']]);
    await reopened.close();
  });

  it('a damaged line ends the read with the same StoreCorruptError as read, after a page of the good events before it', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('s', ['a', 'b', 'c', 'd', 'e'].map((id) => ev(id)), 'no_stream');
    await store.close();
    const file = fileOf(dir, 's');
    const bytes = readFileSync(file);
    const third = bytes.indexOf('"id":"c"');
    bytes[third + 6] = 'C'.charCodeAt(0); // checksum mismatch
    writeFileSync(file, bytes);

    const damaged = await openJsonlEventStore(dir, { readOnly: true });
    const read = await drain(damaged.read('s'));
    const paged = await drain(damaged.readPages('s'));
    expect(read.items.map((e) => e.id)).toEqual(['a', 'b']);
    expect(paged.items.map((p) => p.map((e: RecordedEvent) => e.id))).toEqual([['a', 'b']]);
    for (const { error } of [read, paged]) {
      expect(isStoreCorruptError(error)).toBe(true);
      const e = error as StoreCorruptError;
      expect(e.line).toBe(4);
      expect(e.offset).toBe(bytes.lastIndexOf('\n', third) + 1);
      expect(e.message).toMatch(/checksum mismatch/);
    }
    expect((paged.error as Error).message).toBe((read.error as Error).message);
    // a read that starts after the damaged line never meets it
    expect((await collect(damaged.readPages('s', { from: 3n }))).flat().map((e) => e.id)).toEqual(['d', 'e']);
    // backwards, the damaged line is met after d and e
    const back = await drain(damaged.readPages('s', { direction: 'backwards' }));
    expect(back.items.flat().map((e) => e.id)).toEqual(['e', 'd']);
    expect(isStoreCorruptError(back.error)).toBe(true);
    await damaged.close();
  });

  it('a line whose revision breaks the sequence is refused, not skipped', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('s', [ev('a'), ev('b'), ev('c')], 'no_stream');
    await store.close();
    const file = fileOf(dir, 's');
    const lines = readFileSync(file, 'utf8').split('\n');
    // swap the lines of revisions 0 and 1 (each line is intact, with its own checksum)
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    writeFileSync(file, lines.join('\n'));
    const swapped = await openJsonlEventStore(dir, { readOnly: true });
    const paged = await drain(swapped.readPages('s'));
    expect(paged.items).toEqual([]);
    expect(isStoreCorruptError(paged.error)).toBe(true);
    expect((paged.error as Error).message).toMatch(/revision 1, expected 0/);
    await swapped.close();
  });
});
