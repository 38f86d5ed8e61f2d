import { join } from 'node:path';
import { isProjection, runProjection, type Projection } from '../../projections/index.js';
import { FileCheckpointStore } from '../checkpoints/file-checkpoint-store.js';
import { MemoryCheckpointStore } from '../checkpoints/memory-checkpoint-store.js';
import type { CheckpointStore } from '../../projections/checkpoints/checkpoint-store.js';
import { DEFAULT_STORE_SPEC, openStore } from '../store/open-store.js';
import { errorChain } from '../../runtime/errors.js';
import type { CliIo } from './io.js';
import { loadUserModule } from './load-module.js';
import { parseArgs } from './parse-args.js';

export const PROJECT_USAGE = `usage: steerlog project <module> [--store <spec>] [--stream <session>] [--checkpoints <dir>] [--rebuild]
  <module>            a JS or TS module whose default export is a projection (defineProjection); an optional
                      named export report(state) says what to print
  --store <spec>      jsonl:<dir> | postgres://… | esdb://… | memory:   (default ${DEFAULT_STORE_SPEC})
  --stream <session>  fold one session stream (default: every stream, in the store's global order)
  --checkpoints <dir> where checkpoints live (default: <dir>/projections for a jsonl store, else in memory)
  --rebuild           ignore the checkpoint and fold from the start`;

/**
 * `steerlog project <module>`: folds the store into a user projection up to the head, commits the checkpoint (so the
 * next run resumes), prints `report(state)` (or the state) as JSON. Exit 0, 1 when the projection fails, 2 on usage errors.
 */
export const projectCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseArgs(argv, { values: ['store', 'stream', 'checkpoints'], flags: ['rebuild'] });
  if (!args.ok || args.positional.length !== 1) {
    io.stderr.write(`${args.ok ? '' : `${args.error}\n`}${PROJECT_USAGE}\n`);
    return 2;
  }
  const modulePath = args.positional[0]!;
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(modulePath);
  } catch (e) {
    io.stderr.write(`steerlog project: cannot load ${modulePath}: ${errorChain(e)}\n`);
    return 2;
  }
  const projection = mod.default;
  if (!isProjection(projection)) {
    io.stderr.write(`steerlog project: the default export of ${modulePath} is not a projection (defineProjection({name, version, initialState, evolve}))\n`);
    return 2;
  }
  const report = typeof mod.report === 'function' ? (mod.report as (s: unknown) => unknown) : (s: unknown) => s;
  const spec = args.values.store ?? DEFAULT_STORE_SPEC;
  let store;
  try {
    store = await openStore(spec);
  } catch (e) {
    io.stderr.write(`steerlog project: ${errorChain(e)}\n`);
    return 2;
  }
  const checkpointDir = args.values.checkpoints ?? (spec.startsWith('jsonl:') ? join(spec.slice('jsonl:'.length), 'projections') : undefined);
  const checkpoints: CheckpointStore = checkpointDir ? new FileCheckpointStore(checkpointDir) : new MemoryCheckpointStore();
  try {
    const run = runProjection(projection as Projection<unknown>, {
      store,
      checkpoints,
      from: args.flags.rebuild ? 'start' : 'checkpoint',
      ...(args.values.stream ? { stream: args.values.stream } : {}),
    });
    await Promise.race([run.caughtUp, run.done]);
    await run.stop();
    await run.done;
    io.stdout.write(`${JSON.stringify(report(run.state()), null, 2)}\n`);
    return 0;
  } catch (e) {
    io.stderr.write(`steerlog project: ${errorChain(e)}\n`);
    return 1;
  } finally {
    await checkpoints.close();
    await store.close();
  }
};
