import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { isProjectionSupersededError, startProjectionWorker, stopWhenSuperseded } from '../../projections/index.js';
import { appendChunks, keyedTally, sessionLog } from './support/worker-fixtures.js';

describe('a worker of a superseded version (stopWhenSuperseded)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'steerlog-superseded-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('keeps running while no newer version is live; stops, committed and released, once a rebuild swaps a newer one in', async () => {
    const store = new MemoryEventStore();
    await appendChunks(store, 's-1', sessionLog('s-1', 3));
    const projections = new FileProjectionStore(dir);
    const worker = startProjectionWorker(keyedTally('tally', 1), { store, projections, owner: 'w1', leaseMs: 3000 });
    let told = 0;
    const watched = stopWhenSuperseded({ name: 'tally', version: 1 }, worker, { projections, intervalMs: 20, onSuperseded: () => told++ });
    await worker.caughtUp;
    // a version older than the worker's, or the worker's own, live: nothing changes
    await projections.swap('tally', 1);
    await appendChunks(store, 's-2', sessionLog('s-2', 2));
    await new Promise((r) => setTimeout(r, 100));
    expect(worker.owned()).toEqual([0]);
    // version 2 swapped in (what `projections rebuild` does once it caught up)
    await projections.swap('tally', 2);
    const e = await watched.done.then(() => null, (x: unknown) => x);
    expect(isProjectionSupersededError(e)).toBe(true);
    expect(e).toMatchObject({ code: 'projection-superseded', projection: 'tally', version: 1, live: 2 });
    expect(told).toBe(1);
    const rows = await projections.status('tally');
    expect(rows.filter((r) => r.key.version === 1).map((r) => r.owner)).toEqual([null]); // the lease was released
    expect(rows.find((r) => r.key.version === 1)!.position).not.toBeNull();
    await store.close();
  });

  it('a worker started after the swap stops at once; a failure of the worker itself is passed through unchanged', async () => {
    const store = new MemoryEventStore();
    await appendChunks(store, 's-1', sessionLog('s-1', 2));
    const projections = new FileProjectionStore(dir);
    await projections.swap('tally', 3);
    const late = startProjectionWorker(keyedTally('tally', 2), { store, projections, owner: 'late' });
    const e = await stopWhenSuperseded({ name: 'tally', version: 2 }, late, { projections, intervalMs: 20 }).done.then(() => null, (x: unknown) => x);
    expect(e).toMatchObject({ code: 'projection-superseded', version: 2, live: 3 });
    // a newer version's worker is not stopped by an older live one; its own failure comes through
    const newer = startProjectionWorker(keyedTally('tally', 4), { store, projections, owner: 'newer', follow: false });
    await expect(stopWhenSuperseded({ name: 'tally', version: 4 }, newer, { projections, intervalMs: 20 }).done).resolves.toBeUndefined();
    await store.close();
  });
});
