import { isProjection, runProjection, type Projection } from '../../projections/index.js';
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

export const PROJECT_USAGE = `usage: steerlog project <module> [--store <spec>] [--stream <session>] [--checkpoints <dir>] [--rebuild]
  <module>            a JS or TS module whose default export is a projection (defineProjection); an optional
                      named export report(state) says what to print
  --store <spec>      the store, opened read-only: jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… |
                      archive:<file>   (default ${DEFAULT_STORE_SPEC})
  --stream <session>  fold one session stream (default: every stream, in the store's global order)
  --checkpoints <dir> resume from and commit the checkpoint in <dir> (default: none kept, fold from the start)
  --rebuild           ignore the checkpoint and fold from the start
exit: 0 done, 1 the projection failed, 2 usage, a module that is not a projection or no such session, 3 the store
      could not be read`;

/**
 * `steerlog project <module>`: folds the store, opened read-only, into a user projection up to the head, prints
 * `report(state)` (or the state) as JSON; with `--checkpoints <dir>` it resumes from and commits the checkpoint there
 * (nothing is written anywhere else). Exit codes: see PROJECT_USAGE.
 */
export const projectCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'stream', 'checkpoints'], flags: ['rebuild'] });
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
  if (!isProjection(projection)) {
    throw new UsageError(`the default export of ${modulePath} is not a projection (defineProjection({name, version, initialState, evolve}))`);
  }
  const report = typeof mod.report === 'function' ? (mod.report as (s: unknown) => unknown) : (s: unknown) => s;
  const spec = args.strings.store ?? DEFAULT_STORE_SPEC;
  return readingStore(spec, async (store) => {
    const stream = args.strings.stream;
    if (stream !== undefined && (await store.revision(stream)) === 'no_stream') throw new SessionNotFoundError(stream, spec);
    const checkpoints: CheckpointStore = args.strings.checkpoints ? new FileCheckpointStore(args.strings.checkpoints) : new MemoryCheckpointStore();
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
