import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { defineProjection, runProjection, type CheckpointStore, type ProjectionRun } from '../../projections/index.js';
import { FileCheckpointStore, MemoryCheckpointStore } from '../../adapters/checkpoints/index.js';
import { PostgresCheckpointStore } from '../../adapters/checkpoints/postgres-checkpoint-store.js';
import { buildLog, opArb } from './support/random-log.js';
import { dropSchema, PG_URL, postgresAvailable } from '../adapters/store/postgres/pg-test-support.js';
import { digestStep, foldDigest, initialDigest, toNew, type DigestState } from './support/projection-fixtures.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

type Kill = { readonly after: number; readonly mode: 'stop' | 'abandon' };
const killArb: fc.Arbitrary<Kill> = fc.record({ after: fc.integer({ min: 1, max: 60 }), mode: fc.constantFrom<Kill['mode']>('stop', 'abandon') });

const scenarioArb = fc.record({
  ops: fc.array(opArb, { minLength: 60, maxLength: 120 }),
  chunks: fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 30 }),
  kills: fc.array(killArb, { minLength: 1, maxLength: 8 }),
  batchSize: fc.integer({ min: 1, max: 30 }),
  allStreams: fc.boolean(),
});

const harnesses: { name: string; runs: number; needsPostgres?: boolean; open: (i: number) => Promise<CheckpointStore>; cleanup: () => Promise<void> }[] = [];
const dirs: string[] = [];
const schema = `steerlog_crash_${process.pid}_${Date.now().toString(36)}`;
harnesses.push({ name: 'memory', runs: 40, open: async () => new MemoryCheckpointStore(), cleanup: async () => undefined });
harnesses.push({
  name: 'file',
  runs: 12,
  open: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'steerlog-crash-'));
    dirs.push(dir);
    return new FileCheckpointStore(dir, { fsync: false });
  },
  cleanup: async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  },
});
// reported as skipped when PostgreSQL is not reachable (test/support/global-setup.ts probes it once)
harnesses.push({
  name: 'postgres',
  runs: 8,
  needsPostgres: true,
  open: async (i) => new PostgresCheckpointStore({ connection: PG_URL, schema, table: `checkpoints_${i}` }),
  cleanup: () => dropSchema(schema),
});

describe.each(harnesses)('runner killed at random points, restarted ($name checkpoints)', (harness) => {
  afterAll(() => harness.cleanup());
  let counter = 0;

  it.skipIf(harness.needsPostgres === true && !postgresAvailable)('ends with exactly the state of one uninterrupted fold while the stream is still being appended to', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ ops, chunks, kills, batchSize, allStreams }) => {
        const store = new MemoryEventStore();
        const checkpoints = await harness.open(counter++);
        try {
          const events = buildLog(ops, 's').events;
          // A second stream in all-streams mode, so global positions interleave.
          const other = allStreams ? buildLog(ops.slice(0, 20), 'o').events : [];
          const writer = (async () => {
            let i = 0;
            let j = 0;
            for (let c = 0; i < events.length; c++) {
              const n = chunks[c % chunks.length]!;
              await store.append('s', events.slice(i, i + n).map(toNew), 'any');
              i += n;
              if (j < other.length) {
                await store.append('o', other.slice(j, j + 3).map(toNew), 'any');
                j += 3;
              }
              if (c % 2 === 0) await tick();
            }
            while (j < other.length) {
              await store.append('o', other.slice(j, j + 3).map(toNew), 'any');
              j += 3;
            }
          })();
          const source = allStreams ? {} : { stream: 's' };
          const headOf = async (): Promise<bigint> => {
            if (!allStreams) return BigInt(events.length - 1);
            let last = -1n;
            for await (const e of store.readAll()) last = e.position;
            return last;
          };

          for (const kill of kills) {
            let current: ProjectionRun<DigestState> | null = null;
            let seen = 0;
            let killed!: () => void;
            const wasKilled = new Promise<void>((resolve) => (killed = resolve));
            const step = (state: DigestState, e: Parameters<typeof digestStep>[1]): DigestState => {
              const next = digestStep(state, e);
              if (++seen === kill.after && current) {
                if (kill.mode === 'abandon') current.abandon();
                else void current.stop();
                killed();
              }
              return next;
            };
            const projection = defineProjection<DigestState>({ name: 'crash', version: 1, initialState: initialDigest(), evolve: step, evolveIgnored: step });
            const run = runProjection(projection, { store, checkpoints, ...source, batchSize, flushIntervalMs: 5 });
            current = run;
            const finished = writer.then(async () => run.waitFor(await headOf())).catch(() => undefined);
            await Promise.race([wasKilled, finished]);
            if (kill.mode === 'stop') await run.stop();
            else run.abandon();
            await run.done.catch(() => undefined);
          }

          await writer;
          const head = await headOf();
          const final = runProjection(defineProjection<DigestState>({ name: 'crash', version: 1, initialState: initialDigest(), evolve: digestStep, evolveIgnored: digestStep }), {
            store,
            checkpoints,
            ...source,
            batchSize,
          });
          await final.waitFor(head);
          const all: { stream: string; event: LogEvent }[] = [];
          for await (const e of store.readAll()) {
            if (allStreams || e.stream === 's') all.push({ stream: e.stream, event: (e.stream === 's' ? events : other)[Number(e.revision)]! });
          }
          const expected = foldDigest(all);
          expect(final.state()).toEqual(expected);
          await final.stop();
          const saved = await checkpoints.load({ name: 'crash', version: 1 });
          expect(saved?.position).toBe(head);
          expect(JSON.parse(saved!.state)).toEqual(expected);
        } finally {
          await checkpoints.close();
          await store.close();
        }
      }),
      { numRuns: harness.runs, endOnFailure: true },
    );
  });
});
