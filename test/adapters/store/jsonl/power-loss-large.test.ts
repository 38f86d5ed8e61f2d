import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJsonlEventStore } from '../../../../adapters/store/jsonl/index.js';
import { seededRandom } from '../../../support/seeded-random.js';
import { scratchParent } from './support/damage.js';
import { PowerFs } from './support/power-fs.js';
import { ensure, ev, LARGE, STREAMS, workload } from './support/power-workload.js';
import { verifyLog } from './support/verify.js';

/**
 * Power loss (as power-loss.test.ts: PowerFs drops what was not fsynced) with large commits in the mix. A commit of
 * more than 4 MiB of lines to existing streams is not copied into the group journal: its stream file is fsynced,
 * then its index records are written and fsynced. Skip either fsync and an acknowledged large commit can lose its
 * lines while the index names them (refused as damage), or vanish with its index records. About one batch in four
 * is large (6 events of 750 KB), the others small and journaled. Heavy (tens of MB written per directory): an
 * E2E file (`npm run test:e2e`). `STEERLOG_POWER_LARGE_CASES` sets the number of directories per mode (default 4).
 */
const parent = scratchParent('steerlog-power-large-');
afterAll(() => rmSync(parent, { recursive: true, force: true }));

describe('power loss with large commits (past the group journal) mixed with small journaled ones', () => {
  const LARGE_CASES = Number(process.env.STEERLOG_POWER_LARGE_CASES ?? 4);
  for (const durability of ['fsync', 'group'] as const) {
    it(`keeps every acknowledged event (${durability} mode, ${LARGE_CASES} directories × 2 cuts)`, async () => {
      let largeAcked = 0;
      for (let c = 0; c < LARGE_CASES; c++) {
        const seed = (durability === 'fsync' ? 3000 : 4000) + c;
        const random = seededRandom(seed);
        const dir = join(parent, `large-${durability}-${c}`);
        // every stream exists, durably: a large batch then always goes to an existing stream file
        const setup = await openJsonlEventStore(await ensure(dir), { durability: 'fsync' });
        for (const stream of STREAMS) await setup.append(stream, [ev(`${stream}.0of1`)], 'no_stream');
        await setup.close();
        const acked = new Set<string>(STREAMS.map((s) => `${s}.0of1`));
        for (let round = 0; round < 2; round++) {
          const fs = new PowerFs(dir);
          fs.cutAfter(20 + Math.floor(random() * 60));
          await workload(dir, fs, durability, round, random, acked, 4);
          fs.powerLoss(random);
          try {
            await verifyLog(dir, STREAMS, acked);
          } catch (e) {
            throw new Error(`seed ${seed}, round ${round}, cut after ${fs.calls} calls: ${(e as Error).message}`, { cause: e });
          }
        }
        largeAcked += [...acked].filter((id) => id.endsWith(`of${LARGE.events}`)).length / LARGE.events;
        rmSync(dir, { recursive: true, force: true });
      }
      expect(largeAcked).toBeGreaterThan(LARGE_CASES);
      console.log(`power loss, large commits (${durability}): ${largeAcked} large commits acknowledged and checked`);
      // about 30 s of fsyncs alone on an idle 2-core machine; the e2e step runs it beside other process-level files
    }, 240_000);
  }
});

