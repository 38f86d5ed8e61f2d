import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { isStoreIoError } from '../../../../runtime/ports/store-errors.js';
import { fullDiskLockFs, type LockOp } from './support/faulty-fs.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'steerlog-full-disk-'));
  dirs.push(d);
  return d;
};
const ev = (id: string) => ({ id, type: 'test/event', time: 1, data: { id } });

describe('opening a JSONL store on a full disk', () => {
  it('every lock-file call that runs out of space (ENOSPC) makes open fail with store-io; nothing stored is lost; open works once there is space', async () => {
    const dir = freshDir();
    const seeded = await openJsonlEventStore(dir, { durability: 'none' });
    await seeded.append('s', [ev('a'), ev('b')], 'no_stream');
    await seeded.close();
    // count the lock's calls on one healthy open, then fail each of them in turn
    const probe = fullDiskLockFs('mkdirSync', Number.POSITIVE_INFINITY);
    await (await openJsonlEventStore(dir, { durability: 'none', lockFs: probe })).close();
    const points = (Object.entries(probe.calls) as [LockOp, number][]).flatMap(([op, n]) => Array.from({ length: n }, (_, i) => [op, i] as const));
    expect(points.map(([op]) => op)).toEqual(expect.arrayContaining(['mkdirSync', 'openSync', 'writeSync', 'linkSync']));
    for (const [op, nth] of points) {
      const outcome = await openJsonlEventStore(dir, { durability: 'none', lockFs: fullDiskLockFs(op, nth) }).then(
        async (store) => {
          await store.close();
          return 'opened';
        },
        (e: unknown) => e,
      );
      expect(isStoreIoError(outcome), `${op} #${nth}: ${String(outcome)}`).toBe(true);
      expect((outcome as Error).message).toContain('ENOSPC');
    }
    const store = await openJsonlEventStore(dir, { durability: 'none', lockTimeoutMs: 2000 });
    const ids: string[] = [];
    for await (const e of store.read('s')) ids.push(e.id);
    expect(ids).toEqual(['a', 'b']);
    await store.close();
  });

  it('a fresh store directory on a full disk: store-io, not a raw errno', async () => {
    const outcome = await openJsonlEventStore(join(freshDir(), 'new'), { lockFs: fullDiskLockFs('mkdirSync', 0) }).catch((e: unknown) => e);
    expect(isStoreIoError(outcome)).toBe(true);
  });
});
