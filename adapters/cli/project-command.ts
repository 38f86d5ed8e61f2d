import { join } from 'node:path';
import { isProjection, runProjection, type Projection } from '../../projections/index.js';
import { FileCheckpointStore } from '../checkpoints/file-checkpoint-store.js';
import { MemoryCheckpointStore } from '../checkpoints/memory-checkpoint-store.js';
import type { CheckpointStore } from '../../projections/checkpoints/checkpoint-store.js';
import { DEFAULT_STORE_SPEC, openStore } from '../store/open-store.js';
import { isStoreError } from '../../runtime/ports/store-errors.js';
import { parseCommandArgs } from './cli-args.js';
import { EXIT, oneLine, reportFailure, reportUsage } from './cli-failure.js';
import type { CliIo } from './io.js';
import { loadUserModule } from './load-module.js';

export const PROJECT_USAGE = `usage: steerlog project <module> [--store <spec>] [--stream <session>] [--checkpoints <dir>] [--rebuild]
  <module>            a JS or TS module whose default export is a projection (defineProjection); an optional
                      named export report(state) says what to print
  --store <spec>      jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | memory:   (default ${DEFAULT_STORE_SPEC})
  --stream <session>  fold one session stream (default: every stream, in the store's global order)
  --checkpoints <dir> where checkpoints live (default: <dir>/projections for a jsonl store, else in memory)
  --rebuild           ignore the checkpoint and fold from the start
exit: 0 done, 1 the projection failed, 2 usage or a module that is not a projection, 3 the store could not be read`;

/**
 * `steerlog project <module>`: folds the store into a user projection up to the head, commits the checkpoint (so the
 * next run resumes), prints `report(state)` (or the state) as JSON. Exit 0, 1 when the projection fails, 2 on usage errors.
 */
export const projectCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'stream', 'checkpoints'], flags: ['rebuild'] });
  if (!args.ok) return reportUsage(io, PROJECT_USAGE, args.error);
  if (args.positionals.length !== 1) return reportUsage(io, PROJECT_USAGE, 'project needs one module');
  const modulePath = args.positionals[0]!;
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(modulePath);
  } catch (e) {
    io.stderr.write(`steerlog project: cannot load ${modulePath}: ${oneLine(e)}\n`);
    return 2;
  }
  const projection = mod.default;
  if (!isProjection(projection)) {
    io.stderr.write(`steerlog project: the default export of ${modulePath} is not a projection (defineProjection({name, version, initialState, evolve}))\n`);
    return 2;
  }
  const report = typeof mod.report === 'function' ? (mod.report as (s: unknown) => unknown) : (s: unknown) => s;
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  let store;
  try {
    store = await openStore(spec);
  } catch (e) {
    return reportFailure(io, 'project', e, false);
  }
  const checkpointDir = args.strings.checkpoints ?? (spec.startsWith('jsonl:') ? join(spec.slice('jsonl:'.length), 'projections') : undefined);
  const checkpoints: CheckpointStore = checkpointDir ? new FileCheckpointStore(checkpointDir) : new MemoryCheckpointStore();
  try {
    const run = runProjection(projection as Projection<unknown>, {
      store,
      checkpoints,
      from: args.flags.rebuild ? 'start' : 'checkpoint',
      ...(args.strings.stream ? { stream: args.strings.stream } : {}),
    });
    await Promise.race([run.caughtUp, run.done]);
    await run.stop();
    await run.done;
    io.stdout.write(`${JSON.stringify(report(run.state()), null, 2)}\n`);
    return 0;
  } catch (e) {
    if (isStoreError(e)) return reportFailure(io, 'project', e, false);
    io.stderr.write(`steerlog project: ${oneLine(e)}\n`);
    return EXIT.invalid;
  } finally {
    await checkpoints.close();
    await store.close();
  }
};
