import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { FileProjectionStore } from '../../adapters/checkpoints/file-projection-store.js';
import { startProjectionWorker } from '../../projections/index.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';
import { toNew } from '../../test/projections/support/projection-fixtures.js';
import steeringPerSession, { report, type SteeringState } from './steering-per-session.js';

describe('docs/projections/steering-per-session.ts as a worker', () => {
  it('follows two sessions over 2 partitions, then a second worker resumes from the file checkpoints and counts what came after', async () => {
    const store = new MemoryEventStore();
    const dir = await mkdtemp(join(tmpdir(), 'steerlog-docs-worker-'));
    try {
      const a = new LogBuilder('a').followup(msg('a1')).wait(40).runTurn(); // queued, claimed after 40 idle ms (+1 ms per event)
      const b = new LogBuilder('b').followup(msg('b1')).turnStart();
      b.claim();
      b.steer(msg('b2')); // steered into the running turn
      for (const [id, log] of [['a', a], ['b', b]] as const) await store.append(id, log.events.map(toNew), 'any');
      const projections = new FileProjectionStore(dir, { fsync: false });
      const worker = startProjectionWorker(steeringPerSession, { store, projections, owner: 'docs-1', partitions: 2, flushIntervalMs: 10 });
      await worker.caughtUp;
      const first = report(Object.fromEntries(worker.states()) as Record<string, SteeringState>);
      expect(first).toEqual({
        a: { steered: 0, queued: 1, claims: 1, meanWaitMs: 42, maxWaitMs: 42 },
        b: { steered: 1, queued: 1, claims: 1, meanWaitMs: 2, maxWaitMs: 2 }, // claimed after turn/start
      });
      await worker.stop();
      // while no worker runs, b's turn claims the steer one event later
      const before = b.events.length;
      b.claim();
      await store.append('b', b.events.slice(before).map(toNew), 'any');
      const next = startProjectionWorker(steeringPerSession, { store, projections, owner: 'docs-2', partitions: 2, follow: false });
      await next.done;
      expect(report(Object.fromEntries(next.states()) as Record<string, SteeringState>).b).toEqual({ steered: 1, queued: 1, claims: 2, meanWaitMs: 1.5, maxWaitMs: 2 });
      // every event applied once across both workers (events the filter drops count too: they were handled)
      const applied = (await projections.status('steering-per-session')).reduce((n, s) => n + s.applied, 0n);
      expect(applied).toBe(BigInt(a.events.length + b.events.length));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
