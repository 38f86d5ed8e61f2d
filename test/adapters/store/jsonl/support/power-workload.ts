import { mkdir } from 'node:fs/promises';
import { openJsonlEventStore, type JsonlDurability } from '../../../../../adapters/store/jsonl/index.js';
import type { NewEvent } from '../../../../../runtime/ports/event-store.js';
import type { PowerFs } from './power-fs.js';

/** The power-loss suites' workload (power-loss.test.ts, power-loss-large.test.ts). */

/** The streams the writers append to. */
export const STREAMS = ['p/a', 'p/b', 'p/c', 'p/d'];
/** An event whose id names its batch (`<run>.<w>.<i>.<j>of<k>`, see verifyLog), padded to `pad` bytes of data. */
export const ev = (id: string, pad = 40): NewEvent => ({ id, type: 'power/test', time: 1, data: { id, pad: 'x'.repeat(pad) } });
/** A large batch: 6 events of 750 KB, past the 4 MiB a commit may copy into the group journal. */
export const LARGE = { events: 6, pad: 750_000 };

/**
 * Three writers append batches of 1–3 events until the cut makes them fail; returns the acknowledged ids. With
 * `largeEvery`, about one batch in `largeEvery` is a large one (LARGE): committed past the journal, its stream file
 * and the index fsynced in turn.
 */
export const workload = async (dir: string, fs: PowerFs, durability: JsonlDurability, round: number, random: () => number, acked: Set<string>, largeEvery = 0): Promise<void> => {
  let store;
  try {
    store = await openJsonlEventStore(dir, { durability, fs });
  } catch {
    return; // the cut came during open/recovery
  }
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const stream = STREAMS[Math.floor(random() * STREAMS.length)]!;
      const large = largeEvery > 0 && random() < 1 / largeEvery;
      const size = large ? LARGE.events : 1 + Math.floor(random() * 3);
      const ids = Array.from({ length: size }, (_, j) => `r${round}.${w}.${i}.${j}of${size}`);
      try {
        const rev = await store.revision(stream);
        await store.append(stream, ids.map((id) => ev(id, large ? LARGE.pad : 40)), rev);
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

/** Creates `dir` (and its parents) when missing; returns it. */
export const ensure = async (dir: string): Promise<string> => {
  await mkdir(dir, { recursive: true });
  return dir;
};
