import {
  isAnyProjection,
  isKeyedProjection,
  isProjection,
  isTableProjection,
  parseFailurePolicy,
  runProjection,
  startProjectionWorker,
  stopWhenSuperseded,
  type AnyProjection,
  type Projection,
} from '../../projections/index.js';
import { openProjectionStore, workerId } from './projection-worker-cli.js';
import { FileCheckpointStore } from '../checkpoints/file-checkpoint-store.js';
import { MemoryCheckpointStore } from '../checkpoints/memory-checkpoint-store.js';
import type { CheckpointStore } from '../../projections/checkpoints/checkpoint-store.js';
import { DEFAULT_STORE_SPEC } from '../store/open-store.js';
import { isStoreError } from '../../runtime/ports/store-errors.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, oneLine, SessionNotFoundError, UsageError } from './cli-failure.js';
import { assertReadableFile, readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { loadUserModule } from './load-module.js';
import { positiveIntOption } from './projection-module.js';

export const PROJECT_USAGE = `usage: steerlog project <module> [--store <spec>] [--stream <session>] [--checkpoints <spec>] [--rebuild]
                        [--follow] [--partitions <n>] [--failure stop|park|retry:<n>[:park]] [--lease-ms <ms>]
  <module>             a JS or TS module whose default export is a projection (defineProjection,
                       defineKeyedProjection, defineTableProjection); an optional named export report(state)
                       says what to print
  --store <spec>       the store, opened read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… |
                       archive:<file>   (default ${DEFAULT_STORE_SPEC})
  --stream <session>   fold one session stream (default: every stream, in the store's global order)
  --checkpoints <spec> where checkpoints are kept: a directory, file:<dir> or postgres://…[?schema=<s>]
                       (default: a one-shot fold of a single-state projection keeps none; a worker keeps them
                       in the PostgreSQL store's database, schema <store schema>_projections, or in
                       <jsonl dir>/projections)
  --rebuild            ignore the checkpoint and fold from the start (a worker: drop this version first)
  --follow             run as a worker: catch up, then follow live events until SIGTERM/SIGINT (which finish
                       the batch, commit it and release the leases)
  --partitions <n>     spread the streams over n partitions (stable hash of the stream id), each with its own
                       lease and checkpoint; workers sharing the checkpoints take their share (default 1)
  --failure <policy>   an event that cannot be applied: stop (default), park (dead-letter list, continue) or
                       retry:<n>[:park|:stop] (table projections: retry the batch n times with backoff)
  --lease-ms <ms>      a worker's lease length; renewed every third of it (default 10000)
exit: 0 done, 1 the projection failed, 2 usage, a module that is not a projection or no such session, 3 the store
      could not be read`;

/**
 * `steerlog project <module>`: folds the store, opened read-only, into a user projection up to the head, prints
 * `report(state)` (or the state) as JSON; with `--checkpoints <dir>` it resumes from and commits the checkpoint there
 * (nothing is written anywhere else). Exit codes: see PROJECT_USAGE.
 */
export const projectCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'stream', 'checkpoints', 'partitions', 'failure', 'lease-ms'], flags: ['rebuild', 'follow'] });
  if (!args.ok) throw new UsageError(args.error);
  if (args.positionals.length !== 1) throw new UsageError('project needs one module');
  const modulePath = args.positionals[0]!;
  await assertReadableFile(modulePath);
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(modulePath);
  } catch (e) {
    throw new UsageError(`cannot load ${modulePath}: ${oneLine(e)}`);
  }
  const projection = mod.default;
  if (!isAnyProjection(projection)) {
    throw new UsageError(`the default export of ${modulePath} is not a projection (defineProjection({name, version, initialState, evolve}))`);
  }
  const report = typeof mod.report === 'function' ? (mod.report as (s: unknown) => unknown) : (s: unknown) => s;
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  const checkpointsSpec = args.strings.checkpoints;
  const legacy =
    isProjection(projection) &&
    !isKeyedProjection(projection) &&
    !isTableProjection(projection) &&
    !args.flags.follow &&
    args.strings.partitions === undefined &&
    args.strings.failure === undefined &&
    (checkpointsSpec === undefined || !/^(postgres(ql)?|file):/.test(checkpointsSpec));
  if (!legacy) {
    if (args.strings.stream !== undefined) throw new UsageError('--stream folds one session with a single-state projection; a worker reads every stream');
    return workerRun(projection, spec, args.strings, args.flags, report, io);
  }
  return readingStore(spec, async (store) => {
    const stream = args.strings.stream;
    if (stream !== undefined && (await store.revision(stream)) === 'no_stream') throw new SessionNotFoundError(stream, spec);
    const checkpoints: CheckpointStore = args.strings.checkpoints ? new FileCheckpointStore(args.strings.checkpoints) : new MemoryCheckpointStore();
    try {
      const run = runProjection(projection, {
        store,
        checkpoints,
        from: args.flags.rebuild ? 'start' : 'checkpoint',
        ...(args.strings.stream ? { stream: args.strings.stream } : {}),
      });
      await Promise.race([run.caughtUp, run.done]);
      await run.stop();
      await run.done;
      io.stdout.write(`${JSON.stringify(report(run.state()), null, 2)}\n`);
      return EXIT.ok;
    } catch (e) {
      if (isStoreError(e)) throw e;
      io.stderr.write(`steerlog project: ${oneLine(e)}\n`);
      return EXIT.invalid;
    } finally {
      await checkpoints.close();
    }
  }, unreadNotes(io, 'project'));
};

/** `project` as a worker (`--follow`, `--partitions`, keyed and table projections): see PROJECT_USAGE. */
const workerRun = async (
  projection: AnyProjection<unknown>,
  spec: string,
  strings: Record<string, string | undefined>,
  flags: Record<string, boolean>,
  report: (s: unknown) => unknown,
  io: CliIo,
): Promise<number> => {
  const partitions = positiveIntOption(strings.partitions, '--partitions', 1);
  const leaseMs = positiveIntOption(strings['lease-ms'], '--lease-ms', 10_000);
  const failure = strings.failure === undefined ? 'stop' : parseFailurePolicy(strings.failure);
  if (failure === null) throw new UsageError('--failure is stop, park or retry:<n>[:park|:stop]');
  const follow = flags.follow === true;
  return readingStore(spec, async (store) => {
    const opened = await openProjectionStore(strings.checkpoints, spec, follow);
    try {
      if (flags.rebuild) await opened.projections.drop(projection.name, projection.version);
      const owner = workerId();
      const worker = startProjectionWorker(projection, { store, projections: opened.projections, owner, partitions, leaseMs, follow, failure });
      const onSignal = (): void => void worker.stop();
      if (follow) {
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
        void worker.caughtUp.then(
          () => io.stderr.write(`steerlog project: ${projection.name}@${projection.version} caught up; following as ${owner} (checkpoints: ${opened.label})\n`),
          () => undefined,
        );
      }
      // a worker of a version that a rebuild superseded (swapped a newer one in) stops with a typed message
      const watched = follow ? stopWhenSuperseded(projection, worker, { projections: opened.projections }) : worker;
      try {
        await watched.done;
      } catch (e) {
        if (isStoreError(e)) throw e;
        io.stderr.write(`steerlog project: ${oneLine(e)}\n`);
        return EXIT.invalid;
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      }
      if (!isTableProjection(projection)) {
        const states = worker.states();
        const state = isKeyedProjection(projection) ? Object.fromEntries([...states].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : states.get('');
        io.stdout.write(`${JSON.stringify(report(state), null, 2)}\n`);
      } else {
        const rows = await opened.projections.status(projection.name);
        const mine = rows.filter((r) => r.key.version === projection.version);
        io.stdout.write(`${JSON.stringify({ projection: projection.name, version: projection.version, partitions: mine.map((r) => ({ partition: r.key.partition, position: r.position?.toString() ?? null, applied: r.applied.toString(), parked: r.parked })) }, null, 2)}\n`);
      }
      return EXIT.ok;
    } finally {
      await opened.close();
    }
  }, undefined, follow);
};
