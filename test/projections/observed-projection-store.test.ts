import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { observeProjectionStore } from '../../projections/worker/observed-projection-store.js';
import type { StoreOperation } from '../../runtime/ports/store-operations.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('observeProjectionStore', () => {
  it('tells of each commit as a projection-batch operation (timed, its events, position, partition and version), a fenced one with its code; the store is unchanged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'steerlog-observed-projections-'));
    dirs.push(dir);
    const store = new FileProjectionStore(dir, { fsync: false });
    const told: StoreOperation[] = [];
    let clock = 100;
    const observed = observeProjectionStore(store, (op) => told.push(op), { now: () => (clock += 5) });
    expect(observed.supportsTables).toBe(false);
    expect((observed as unknown as { dbSystem: string }).dbSystem).toBe('steerlog.file'); // members beyond the interface pass through
    const key = { name: 'counts', version: 2, partition: 1, partitions: 4 };
    const lease = (await observed.acquire(key, 'worker-a', 60_000))!;
    await observed.commit(lease, { position: 41n, documents: new Map([['s1', '{"n":3}']]), parked: [], applied: 3 });
    expect(told).toEqual([
      { operation: 'projection-batch', system: 'steerlog.file', collection: 'counts', startTime: 105, endTime: 110, events: 3, position: 41n, partition: 1, projectionVersion: 2 },
    ]);
    expect((await store.status('counts')).find((r) => r.key.partition === 1)).toMatchObject({ position: 41n, applied: 3n });

    // another worker takes the partition (the lease ran out): the first one's commit is fenced, told, and rethrown
    await observed.release(lease);
    await observed.acquire(key, 'worker-b', 60_000);
    await expect(observed.commit(lease, { position: 50n, documents: new Map(), parked: [], applied: 1 })).rejects.toMatchObject({ code: 'projection-fenced' });
    expect(told).toHaveLength(2);
    expect(told[1]).toMatchObject({ operation: 'projection-batch', events: 1, position: 50n, error: 'projection-fenced' });

    // a listener that throws never fails a commit
    const throwing = observeProjectionStore(store, () => {
      throw new Error('listener broke');
    });
    const lease2 = (await throwing.acquire({ ...key, partition: 2 }, 'worker-c', 60_000))!;
    await expect(throwing.commit(lease2, { position: 7n, documents: new Map(), parked: [], applied: 0 })).resolves.toBeUndefined();
    await store.close();
  });
});
