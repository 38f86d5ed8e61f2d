import { linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PartitionLog, type LogEntry } from '../../../adapters/checkpoints/file-partition-log.js';
import { FileProjectionStore } from '../../../adapters/checkpoints/file-projection-store.js';
import { isProjectionFencedError, isProjectionStoreLayoutError } from '../../../projections/index.js';

/**
 * The file projection store's partition log has no lock: a writer whose view is stale (paused between its checks
 * and its write, or simply slower) cannot place an entry behind one it did not see. Two `PartitionLog` or
 * `FileProjectionStore` instances on one directory stand for two processes.
 */
let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'steerlog-partition-log-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const take = (owner: string, epoch: number): LogEntry => ({ kind: 'take', owner, epoch, expiresAt: 10_000, at: 0 });
const commit = (epoch: number, position: number, doc: string): LogEntry => ({ kind: 'commit', epoch, position: String(position), applied: 1, at: 0, docs: { k: doc } });

/** Writes `entry` as entry number `seq` the way another process would (complete, then linked), synchronously. */
const placeAs = (seq: number, entry: LogEntry): void => {
  const temp = join(dir, `other-${seq}`);
  writeFileSync(temp, `${JSON.stringify(entry)}\n`);
  linkSync(temp, join(dir, `e${String(seq).padStart(12, '0')}.json`));
};

describe('PartitionLog', () => {
  it('a writer that checked the lease, then lost the race to a take, cannot land its commit after the take', async () => {
    const a = new PartitionLog(dir, false);
    await a.append(() => take('A', 1));
    await a.append(() => commit(1, 10, 'a1'));
    let decisions = 0;
    const result = await a
      .append((s) => {
        decisions++;
        if (s.owner !== 'A' || s.epoch !== 1) throw new Error('fenced');
        // between A's checks and its write, B takes the partition (A paused, its lease ran out)
        if (decisions === 1) placeAs(s.seq + 1, take('B', 2));
        return commit(1, 20, 'stale');
      })
      .catch((e: unknown) => e);
    expect((result as Error).message).toBe('fenced'); // its second look saw the take
    expect(decisions).toBe(2);
    const state = await new PartitionLog(dir, false).read();
    expect({ owner: state.owner, epoch: state.epoch, position: state.position, doc: state.docs.get('k') }).toEqual({ owner: 'B', epoch: 2, position: 10n, doc: '"a1"' });
  });

  it('compaction keeps the state, and an entry re-created under a compacted number is not part of the log', async () => {
    const a = new PartitionLog(dir, false);
    await a.append(() => take('A', 1));
    for (let p = 1; p <= 5; p++) await a.append(() => commit(1, p, `v${p}`));
    await a.compact('A', 1, 3, 0);
    expect(readdirSync(dir).filter((n) => n.startsWith('e')).length).toBe(1); // the snapshot
    placeAs(2, commit(1, 99, 'stale')); // a very stale writer re-creates number 2
    for (const log of [a, new PartitionLog(dir, false)]) {
      const state = await log.read();
      expect({ position: state.position, applied: state.applied, doc: state.docs.get('k') }).toEqual({ position: 5n, applied: 5n, doc: '"v5"' });
    }
    await a.append(() => commit(1, 6, 'v6'));
    expect((await new PartitionLog(dir, false).read()).docs.get('k')).toBe('"v6"');
  });
});

describe('FileProjectionStore without a lock', () => {
  it('a stale store instance (another process) is fenced once another took the partition, whatever it cached', async () => {
    let now = 1_000;
    const a = new FileProjectionStore(dir, { fsync: false, now: () => now });
    const b = new FileProjectionStore(dir, { fsync: false, now: () => now });
    const key = { name: 'p', version: 1, partition: 0, partitions: 1 };
    const la = (await a.acquire(key, 'A', 500))!;
    await a.commit(la, { position: 5n, documents: new Map([['k', '1']]), parked: [], applied: 1 });
    now += 1_000; // A paused past its lease
    const lb = (await b.acquire(key, 'B', 500))!;
    expect(lb.epoch).toBe(2);
    expect((await b.load(lb)).position).toBe(5n);
    const stale = await a.commit(la, { position: 9n, documents: new Map([['k', '2']]), parked: [], applied: 1 }).catch((e: unknown) => e);
    expect(isProjectionFencedError(stale)).toBe(true);
    expect(await a.renew(la, 500)).toBe(false);
    await a.release(la); // nothing: not its lease any more
    await b.commit(lb, { position: 7n, documents: new Map([['k', '3']]), parked: [], applied: 1 });
    const [row] = await a.status('p');
    expect({ owner: row!.owner, epoch: row!.epoch, position: row!.position, applied: row!.applied }).toEqual({ owner: 'B', epoch: 2, position: 7n, applied: 2n });
  });

  it('a directory of the older layout (a journal and a lease file per partition) is refused, not silently restarted, and left as it was', async () => {
    const version = join(dir, 'p@1');
    mkdirSync(version, { recursive: true });
    writeFileSync(join(version, 'meta.json'), '{"partitions":1}\n');
    writeFileSync(join(version, 'p0.lease.json'), '{"owner":"A","epoch":3,"expiresAt":0}');
    writeFileSync(join(version, 'p0.journal'), '{"epoch":3,"position":"41","applied":41,"at":0}\n');
    const before = readdirSync(version).sort();
    const store = new FileProjectionStore(dir, { fsync: false, now: () => 1_000 });
    const key = { name: 'p', version: 1, partition: 0, partitions: 1 };
    for (const attempt of [() => store.acquire(key, 'B', 500), () => store.status('p'), () => store.parked('p', 1)]) {
      const e = await attempt().catch((x: unknown) => x);
      expect(isProjectionStoreLayoutError(e)).toBe(true);
      expect((e as Error).message).toContain('p0.');
    }
    expect(readdirSync(version).sort()).toEqual(before);
    expect(readFileSync(join(version, 'p0.journal'), 'utf8')).toContain('"position":"41"');
  });
});
