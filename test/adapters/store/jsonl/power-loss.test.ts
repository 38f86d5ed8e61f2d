import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchParent } from './support/damage.js';
import { PowerFs } from './support/power-fs.js';
import { ensure, STREAMS, workload } from './support/power-workload.js';
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
