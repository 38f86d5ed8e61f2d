import { isAnyProjection, type AnyProjection } from '../../projections/index.js';
import { oneLine, UsageError } from './cli-failure.js';
import { loadUserModule } from './load-module.js';
import { assertReadableFile } from './reading-store.js';

/**
 * A user's projection module, loaded: its default export, which must be a projection. A file that cannot be read
 * is a `FileUnreadableError` (exit 3); a module that does not load, or whose default export is not a projection, a
 * usage error naming the file (after `option`, e.g. `--projection`, when the file came from one).
 */
export const loadProjectionModule = async (path: string, option?: string): Promise<AnyProjection<unknown>> => {
  const where = option === undefined ? '' : `${option}: `;
  await assertReadableFile(path);
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(path);
  } catch (e) {
    throw new UsageError(`${where}cannot load ${path}: ${oneLine(e)}`);
  }
  if (!isAnyProjection(mod.default)) throw new UsageError(`${where}the default export of ${path} is not a projection`);
  return mod.default;
};

/** A positive-integer option's value (`--partitions`, `--lease-ms`, …); `fallback` when the option is absent. */
export const positiveIntOption = (text: string | undefined, option: string, fallback: number): number => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${option} must be a positive integer`);
  return n;
};
