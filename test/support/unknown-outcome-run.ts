/**
 * One session log driven through a store whose appends fail at random with faults the caller arms: each round logs
 * a few events, arms one fault for the next append, then checkpoints. The checks are the ones an unknown outcome
 * must never break: the session is never fenced, every checkpoint of a round whose fault fires once resolves (no
 * stall), and at the end the store holds the live log exactly once, in order.
 */
import { expect } from 'vitest';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import { SessionLog } from '../../runtime/session-log.js';
import { seededRandom } from './seeded-random.js';

/** Number of faults per run: 100 by default, `UNKNOWN_OUTCOME_FAULTS` for longer runs. */
export const FAULTS_PER_RUN = Number(process.env.UNKNOWN_OUTCOME_FAULTS ?? 100);

export interface FaultRunOptions {
  readonly store: EventStore;
  readonly stream: string;
  /** Arms one fault for the next append; returns a label for the failure message. */
  readonly arm: (random: () => number) => string;
  /** Does every round's checkpoint have to resolve? False when a fault may be a plain failure (reported, retried later). */
  readonly everyCheckpointResolves: boolean;
  readonly faults?: number;
  readonly seed?: number;
}

export interface FaultRunReport {
  readonly seed: number;
  readonly events: number;
  readonly rejectedCheckpoints: number;
}

export const runSessionUnderFaults = async (options: FaultRunOptions): Promise<FaultRunReport> => {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const random = seededRandom(seed);
  const log = new SessionLog({
    store: options.store,
    stream: options.stream,
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 3_600_000, // only checkpoints write
  });
  let rejected = 0;
  const faults = options.faults ?? FAULTS_PER_RUN;
  for (let round = 0; round < faults; round++) {
    const n = 1 + Math.floor(random() * 4);
    for (let i = 0; i < n; i++) log.appendAny('test/tick', { round, i }, { ignorable: true });
    const label = options.arm(random);
    try {
      await log.checkpoint();
    } catch (e) {
      rejected++;
      expect(log.fenced, `seed ${seed}, round ${round} (${label}): the session fenced itself`).toBeNull();
      if (options.everyCheckpointResolves) throw new Error(`seed ${seed}, round ${round} (${label}): checkpoint rejected`, { cause: e });
    }
  }
  // whatever is still pending goes out now, without faults
  for (let attempt = 0; attempt < 3 && log.durableCount < log.events.length; attempt++) await log.checkpoint().catch(() => undefined);
  await log.checkpoint();
  expect(log.fenced, `seed ${seed}`).toBeNull();
  const stored: string[] = [];
  for await (const e of options.store.read(options.stream)) stored.push(e.id);
  expect(stored, `seed ${seed}: the store holds the live log exactly once`).toEqual(log.events.map((e) => e.id));
  return { seed, events: log.events.length, rejectedCheckpoints: rejected };
};
