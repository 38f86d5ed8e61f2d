import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore, type JsonlDurability } from '../../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../../runtime/ports/event-store.js';
import { scratchParent } from './support/damage.js';
import { PowerFs } from './support/power-fs.js';
import { verifyLog } from './support/verify.js';
import { seededRandom } from '../../../support/seeded-random.js';

/**
 * Power loss: the store runs on PowerFs, which knows which bytes and directory entries were fsynced. At a random
 * file-system call the machine stops (every later call fails), then the directory is rewritten as a power loss
 * could leave it — unsynced writes dropped or kept in order, the last one maybe torn, unsynced names gone — and
 * the store is opened again: every acknowledged event must be there exactly once, batches all-or-none, positions
 * and revisions dense. Two cuts per directory (recovery after recovery), fsync and group modes.
 * `STEERLOG_POWER_CASES` sets the number of directories per mode (default 15).
 */
const CASES = Number(process.env.STEERLOG_POWER_CASES ?? 15);
const parent = scratchParent('steerlog-power-');
afterAll(() => rmSync(parent, { recursive: true, force: true }));


const STREAMS = ['p/a', 'p/b', 'p/c', 'p/d'];
const ev = (id: string): NewEvent => ({ id, type: 'power/test', time: 1, data: { id, pad: 'x'.repeat(40) } });

/** Three writers append batches of 1–3 events until the cut makes them fail; returns the acknowledged ids. */
const workload = async (dir: string, fs: PowerFs, durability: JsonlDurability, round: number, random: () => number, acked: Set<string>): Promise<void> => {
  let store;
  try {
    store = await openJsonlEventStore(dir, { durability, fs });
  } catch {
    return; // the cut came during open/recovery
  }
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const stream = STREAMS[Math.floor(random() * STREAMS.length)]!;
      const size = 1 + Math.floor(random() * 3);
      const ids = Array.from({ length: size }, (_, j) => `r${round}.${w}.${i}.${j}of${size}`);
      try {
        const rev = await store.revision(stream);
        await store.append(stream, ids.map(ev), rev);
        for (const id of ids) acked.add(id);
      } catch (e) {
        if ((e as { code?: string }).code === 'concurrency') continue;
        return; // the power is cut
      }
    }
  };
  await Promise.all([0, 1, 2].map(writer));
  await store.close().catch(() => undefined);
};

describe('power loss', () => {
  for (const durability of ['fsync', 'group'] as const) {
    it(`keeps every acknowledged event (${durability} mode, ${CASES} directories × 2 cuts)`, async () => {
      let cuts = 0;
      let ackedTotal = 0;
      for (let c = 0; c < CASES; c++) {
        const seed = (durability === 'fsync' ? 1000 : 2000) + c;
        const random = seededRandom(seed);
        const dir = join(parent, `${durability}-${c}`);
        const acked = new Set<string>();
        for (let round = 0; round < 2; round++) {
          const fs = new PowerFs(await ensure(dir));
          fs.cutAfter(Math.floor(random() * 200));
          await workload(dir, fs, durability, round, random, acked);
          fs.powerLoss(random);
          cuts++;
          try {
            await verifyLog(dir, STREAMS, acked);
          } catch (e) {
            throw new Error(`seed ${seed}, round ${round}, cut after ${fs.calls} calls: ${(e as Error).message}`, { cause: e });
          }
        }
        ackedTotal += acked.size;
        rmSync(dir, { recursive: true, force: true });
      }
      expect(cuts).toBe(CASES * 2);
      expect(ackedTotal).toBeGreaterThan(CASES * 10);
      console.log(`power loss (${durability}): ${cuts} cuts, ${ackedTotal} acknowledged events checked`);
    });
  }
});

const ensure = async (dir: string): Promise<string> => {
  await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
  return dir;
};
