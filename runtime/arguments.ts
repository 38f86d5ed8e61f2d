import { snapshotJson, describeValue } from '../domain/json.js';
import { AbortCauseSchema, type AbortCause } from '../domain/events.js';
import { RuntimeError } from './errors.js';

/**
 * Checks of the arguments the public API takes from callers (options objects, callbacks, flags). A bad argument is
 * refused with `invalid-argument` naming the call and the argument, before anything is logged; an options object is
 * read once, property by property, so a throwing getter or Proxy trap is a refusal, never a raw exception.
 */

/** `invalid-argument`: `where` names the call and the argument. */
export const invalidArgument = (where: string, detail: string): RuntimeError => new RuntimeError('invalid-argument', `${where}: ${detail}`);

/**
 * Reads the named properties of an options argument once. `undefined` is `{}`; anything but a plain object (or an
 * object whose properties cannot be read) is refused.
 */
export const readOptions = <K extends string>(value: unknown, where: string, keys: readonly K[]): { readonly [P in K]?: unknown } => {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArgument(where, `expected an options object, got ${describeValue(value)}`);
  const out: { [P in K]?: unknown } = {};
  for (const key of keys) {
    try {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = v;
    } catch (e) {
      throw invalidArgument(`${where}.${key}`, `could not be read (${e instanceof Error ? e.message : typeof e})`);
    }
  }
  return out;
};

export const optionalBoolean = (value: unknown, where: string): boolean | undefined => {
  if (value === undefined || typeof value === 'boolean') return value;
  throw invalidArgument(where, `expected a boolean, got ${describeValue(value)}`);
};

export const requireBoolean = (value: unknown, where: string): boolean => {
  if (typeof value === 'boolean') return value;
  throw invalidArgument(where, `expected a boolean, got ${describeValue(value)}`);
};

export const requireFunction = <F>(value: unknown, where: string): F => {
  if (typeof value === 'function') return value as F;
  throw invalidArgument(where, `expected a function, got ${describeValue(value)}`);
};

/** A positive safe integer or undefined. */
export const optionalPositiveInteger = (value: unknown, where: string): number | undefined => {
  if (value === undefined || (typeof value === 'number' && Number.isSafeInteger(value) && value > 0)) return value;
  throw invalidArgument(where, `expected a positive integer, got ${describeValue(value)}`);
};

/** A cancellation cause as `turn/end aborted` records it: checked now, so a bad one can never make that event unwritable. */
export const checkAbortCause = (value: unknown, where: string): AbortCause => {
  const copied = snapshotJson(value);
  if (!copied.ok) throw invalidArgument(where, `${copied.problem} at ${copied.path}`);
  const parsed = AbortCauseSchema.safeParse(copied.value);
  if (!parsed.success) throw invalidArgument(where, `not an abort cause (${parsed.error.issues[0]!.message})`);
  return parsed.data;
};
