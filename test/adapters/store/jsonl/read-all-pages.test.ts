import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { streamRevision, type NewEvent, type RecordedEvent } from '../../../../runtime/ports/event-store.js';
import { isStoreCorruptError, type StoreCorruptError } from '../../../../runtime/ports/store-errors.js';
import { collect, drain, fileOf } from './support/verify.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-jsonl-all-pages-'));
  dirs.push(d);
  return d;
};
const ev = (id: string): NewEvent => ({ id, type: 'unit/test', time: 5, data: { id } });


describe('JSONL paged all-streams reads', () => {
  it('a page is the events of one index read (512 records), at most pageSize, deleted streams skipped', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    const streams = Array.from({ length: 40 }, (_, i) => `s${i}`);
    // 1,300 events, one per append, round robin: every run of contiguous lines is a single event
    for (let i = 0; i < 1300; i++) await store.append(streams[i % 40]!, [ev(`e${i}`)], 'any');
    const pages = await collect(store.readAllPages());
    expect(pages.map((p) => p.length)).toEqual([512, 512, 276]);
    expect(pages.flat().map((e) => e.id)).toEqual(Array.from({ length: 1300 }, (_, i) => `e${i}`));
    expect(pages.flat()).toEqual(await collect(store.readAll()));
    // pageSize cuts a page, and so does the end of an index read
    const small = await collect(store.readAllPages({ pageSize: 200 }));
    expect(small.map((p) => p.length)).toEqual([200, 200, 112, 200, 200, 112, 200, 76]);
    // after and maxCount
    const tail = await collect(store.readAllPages({ after: 1000n, maxCount: 250, pageSize: 100 }));
    expect(tail.map((p) => p.length)).toEqual([100, 100, 50]); // index reads start at `after + 1`
    expect(tail.flat().map((e) => e.id)).toEqual(Array.from({ length: 250 }, (_, i) => `e${1001 + i}`));
    // a deleted stream's records are skipped; the others keep their positions
    await store.deleteStream('s3', streamRevision(Math.floor(1300 / 40) - 1 + (3 < 1300 % 40 ? 1 : 0)));
    const kept = (await collect(store.readAllPages({ pageSize: 100 }))).flat();
    expect(kept.length).toBe(1300 - 33);
    expect(kept.some((e) => e.stream === 's3')).toBe(false);
    expect(kept.map((e) => e.id)).toEqual(Array.from({ length: 1300 }, (_, i) => i).filter((i) => i % 40 !== 3).map((i) => `e${i}`));
    expect(kept.every((e) => e.position === BigInt(e.id.slice(1)))).toBe(true);
    await store.close();
  });

  it('a damaged line ends the read with the same StoreCorruptError as readAll, after the good events before it', async () => {
    const dir = freshDir();
    const store = await openJsonlEventStore(dir, { durability: 'none' });
    await store.append('a', [ev('a0'), ev('a1')], 'no_stream');
    await store.append('b', [ev('b0'), ev('b1'), ev('b2')], 'no_stream');
    await store.append('a', [ev('a2')], 'any');
    await store.append('b', [ev('b3')], 'any'); // b's last line stays intact: the open check passes
    await store.close();
    const file = fileOf(dir, 'b');
    const bytes = readFileSync(file);
    const at = bytes.indexOf('"id":"b1"');
    bytes[at + 7] = 'X'.charCodeAt(0); // checksum mismatch on b1, in the middle of b's first batch
    writeFileSync(file, bytes);

    const damaged = await openJsonlEventStore(dir, { readOnly: true });
    const all = await drain(damaged.readAll());
    const paged = await drain(damaged.readAllPages());
    const small = await drain(damaged.readAllPages({ pageSize: 1 }));
    // the good events before the damaged line (b0 too: it is in the same file read as b1), then the error
    expect(all.items.map((e) => e.id)).toEqual(['a0', 'a1', 'b0']);
    expect(paged.items.map((p) => p.map((e: RecordedEvent) => e.id))).toEqual([['a0', 'a1', 'b0']]);
    expect(small.items.map((p) => p.map((e: RecordedEvent) => e.id))).toEqual([['a0'], ['a1'], ['b0']]);
    for (const { error } of [all, paged, small]) {
      expect(isStoreCorruptError(error)).toBe(true);
      expect((error as StoreCorruptError).offset).toBe(bytes.lastIndexOf('\n', at) + 1);
      expect((error as Error).message).toBe((all.error as Error).message);
      expect((error as Error).message).toMatch(/checksum mismatch/);
    }
    // a read that starts after the damaged line never meets it
    expect((await collect(damaged.readAllPages({ after: 3n }))).flat().map((e) => e.id)).toEqual(['b2', 'a2', 'b3']);
    // a read that stops before it neither
    expect((await collect(damaged.readAllPages({ maxCount: 3 }))).flat().map((e) => e.id)).toEqual(['a0', 'a1', 'b0']);
    await damaged.close();
  });
});
