/**
 * `fromAll` over a JSONL store with many streams: the paged path (the store's `readAllPages`, each page emitted
 * synchronously) against the per-event paths, side by side in one run, alternating rounds:
 *   - paged:      `fromAll(store)` (subscribeAllPages → JsonlEventStore.readAllPages);
 *   - no pages:   `fromAll` over the same store behind a wrapper without `readAllPages` (its `subscribeAll`, one
 *                 event per asynchronous step);
 *   - old fromAll: `pullObservable` over `store.subscribeAll` — the code fromAll ran before it read pages.
 * Each read runs to the caught-up marker; the three must deliver the same events (ids and positions, in order).
 * Prints wall-clock and CPU medians and the ratios to the paged path.
 *
 *   npx tsx bench/from-all-pages.ts [events=200000] [streams=2000] [rounds=3]
 * (also run at the end of bench/projections.ts)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeWhile, type Observable } from 'rxjs';
import { openJsonlEventStore } from '../adapters/store/jsonl/index.js';
import { fromAll, pullObservable, type SourceMessage } from '../projections/index.js';
import type { EventStore, RecordedEvent, SubscriptionMessage } from '../runtime/ports/event-store.js';
import { median } from './support/machine.js';

/** What one read delivered: the ids and positions in order, and its wall-clock and CPU seconds. */
interface Run {
  readonly ids: string[];
  readonly positions: bigint[];
  readonly wall: number;
  readonly cpu: number;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** The store's port methods, bound to it, without `readAllPages`. */
const withoutPages = (store: EventStore): EventStore => ({
  maxEventBytes: store.maxEventBytes,
  append: (...a) => store.append(...a),
  read: (...a) => store.read(...a),
  ...(store.readPages !== undefined ? { readPages: (...a: Parameters<NonNullable<EventStore['readPages']>>) => store.readPages!(...a) } : {}),
  subscribe: (...a) => store.subscribe(...a),
  readAll: (...a) => store.readAll(...a),
  subscribeAll: (...a) => store.subscribeAll(...a),
  revision: (...a) => store.revision(...a),
  close: () => store.close(),
});

/** fromAll as it was before pages: one store event per asynchronous step. */
const oldFromAll = (store: EventStore): Observable<SourceMessage<RecordedEvent>> =>
  pullObservable<SubscriptionMessage>((signal) => store.subscribeAll({ signal }));

/** Reads `source` to its caught-up marker. */
const readToCaughtUp = (source: Observable<SourceMessage<RecordedEvent>>): Promise<Run> =>
  new Promise<Run>((resolve, reject) => {
    const ids: string[] = [];
    const positions: bigint[] = [];
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    source.pipe(takeWhile((m) => m.kind === 'event')).subscribe({
      next: (m) => {
        if (m.kind !== 'event') return;
        ids.push(m.event.id);
        positions.push(m.event.position);
      },
      error: reject,
      complete: () => {
        const cpu = process.cpuUsage(cpu0);
        resolve({ ids, positions, wall: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6 });
      },
    });
  });

const sameRun = (name: string, a: Run, b: Run): void => {
  if (a.ids.length !== b.ids.length) throw new Error(`${name}: ${a.ids.length} events vs ${b.ids.length}`);
  for (let i = 0; i < a.ids.length; i++) {
    if (a.ids[i] !== b.ids[i] || a.positions[i] !== b.positions[i]) throw new Error(`${name}: event ${i} differs`);
  }
};

/** Builds the store, times the three paths and prints the figures. */
export const benchFromAll = async (events = 200_000, streams = 2_000, rounds = 3): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), 'steerlog-bench-from-all-'));
  try {
    const store = await openJsonlEventStore(root, { durability: 'none' });
    // Appends of 1–3 events to streams picked by a deterministic pseudo-random sequence, many in flight at once (the
    // group commit shares writes): the global order interleaves the streams, as a host with many sessions writes it.
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let t = performance.now();
    let written = 0;
    while (written < events) {
      const inFlight: Promise<unknown>[] = [];
      for (let k = 0; k < 512 && written < events; k++) {
        const n = Math.min(1 + Math.floor(rnd() * 3), events - written);
        const stream = `session-${Math.floor(rnd() * streams)}`;
        inFlight.push(store.append(stream, Array.from({ length: n }, (_, j) => ({ id: `e${written + j}`, type: 'bench/event', time: 1, data: { n: written + j, text: 'x'.repeat(40) } })), 'any'));
        written += n;
      }
      await Promise.all(inFlight);
    }
    console.log(`\nfromAll over a JSONL store: ${fmt(events)} events in ${fmt(streams)} streams, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const paths: [string, () => Observable<SourceMessage<RecordedEvent>>][] = [
      ['paged (readAllPages)', () => fromAll(store)],
      ['no readAllPages (subscribeAll)', () => fromAll(withoutPages(store))],
      ['old fromAll (pullObservable)', () => oldFromAll(store)],
    ];
    const walls = paths.map(() => [] as number[]);
    const cpus = paths.map(() => [] as number[]);
    let reference: Run | null = null;
    t = performance.now();
    await readToCaughtUp(fromAll(store)); // warm-up (file handles, caches, JIT)
    for (let r = 0; r < rounds; r++) {
      for (const [i, [name, open]] of paths.entries()) {
        const run = await readToCaughtUp(open());
        if (run.ids.length !== events) throw new Error(`${name}: ${run.ids.length} events, expected ${events}`);
        if (reference === null) reference = run;
        else sameRun(`${name} vs ${paths[0]![0]}`, run, reference);
        walls[i]!.push(run.wall);
        cpus[i]!.push(run.cpu);
      }
    }
    const base = median(walls[0]!);
    const baseCpu = median(cpus[0]!);
    for (const [i, [name]] of paths.entries()) {
      const wall = median(walls[i]!);
      const cpu = median(cpus[i]!);
      console.log(
        `${name.padEnd(32)} ${fmt(events / wall).padStart(10)} ev/s   ${(wall / base).toFixed(2)}x the paged time, ` +
          `CPU ${cpu.toFixed(2)} s (${(cpu / baseCpu).toFixed(2)}x)   (${walls[i]!.map((x) => x.toFixed(2)).join(', ')} s)`,
      );
    }
    console.log(`identical events (ids and positions, in order) on every path and round: yes`);
    await store.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
};

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchFromAll(Number(process.argv[2] ?? 200_000), Number(process.argv[3] ?? 2_000), Number(process.argv[4] ?? 3));
}
