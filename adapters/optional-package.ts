import { createRequire } from 'node:module';

/**
 * Loading steerlog's optional peer dependencies (database drivers, provider SDKs) on demand: only when the package
 * itself cannot be found is it "not installed". An installed package that misses a module of its own (say
 * `@kurrent/kurrentdb-client` without its platform's `@kurrent/bridge-…` binary, after an install that omitted
 * optional dependencies) keeps its own error, which names that module.
 */

const isModuleNotFound = (e: unknown): boolean => {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
};

/** Can `packageName` be found from here? Any answer but "not found" counts as found. */
const isResolvable = (packageName: string): boolean => {
  try {
    createRequire(import.meta.url).resolve(packageName);
    return true;
  } catch (e) {
    return !isModuleNotFound(e);
  }
};

/**
 * Imports an optional package; when the package is not installed, throws `missing(cause)` (the caller's typed error
 * naming the package) instead of a resolution error from deep inside the adapter.
 * @internal
 */
export const importOptionalPackage = async (packageName: string, missing: (cause: unknown) => Error): Promise<unknown> => {
  try {
    return await import(packageName);
  } catch (e) {
    if (isModuleNotFound(e) && !isResolvable(packageName)) throw missing(e);
    throw e;
  }
};
