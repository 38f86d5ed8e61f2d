import { importOptionalPackage } from '../optional-package.js';

/**
 * The provider SDKs the `--model` specs load on demand. They are optional peer dependencies of steerlog: install the
 * one your model needs next to steerlog (`npm install @anthropic-ai/sdk`).
 */
export const MODEL_DRIVER_PACKAGES = {
  anthropic: '@anthropic-ai/sdk',
  openai: 'openai',
} as const;

/** A model spec names a provider whose SDK package is not installed. The message names the package to install. */
export class ModelDriverMissingError extends Error {
  readonly code = 'model-driver-missing' as const;
  constructor(
    /** The provider of the spec, e.g. `anthropic`. */
    readonly provider: string,
    /** The npm package to install, e.g. `@anthropic-ai/sdk`. */
    readonly packageName: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`the ${provider} model needs the package "${packageName}", which is not installed: npm install ${packageName}`, options);
    this.name = 'ModelDriverMissingError';
  }
}
/** Is this a {@link ModelDriverMissingError}? */
export const isModelDriverMissingError = (e: unknown): e is ModelDriverMissingError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'model-driver-missing';

/**
 * Loads a provider SDK, so a missing package becomes a {@link ModelDriverMissingError} naming it instead of a
 * resolution error from inside the adapter. An installed SDK that fails to load keeps its own error.
 * @internal
 */
export const loadModelDriver = async <T>(provider: string, packageName: string): Promise<T> =>
  (await importOptionalPackage(packageName, (cause) => new ModelDriverMissingError(provider, packageName, { cause }))) as T;
