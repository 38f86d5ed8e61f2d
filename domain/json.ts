/**
 * Lossless JSON: a value that survives `JSON.parse(JSON.stringify(v))` unchanged.
 * Plain objects, arrays, strings, finite numbers (not -0), booleans and null; no cycles.
 * Returns the path of the first offending value, or null when the value is lossless.
 */
export const findNonJsonPath = (value: unknown): string | null => walk(value, '$', new Set());

const walk = (value: unknown, path: string, seen: Set<object>): string | null => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? null : path;
    case 'object': {
      if (value === null) return null;
      if (seen.has(value)) return path;
      if (Array.isArray(value)) {
        seen.add(value);
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return `${path}[${i}]`;
          const bad = walk(value[i], `${path}[${i}]`, seen);
          if (bad !== null) return bad;
        }
        seen.delete(value);
        return null;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return path;
      seen.add(value);
      for (const key of Object.keys(value)) {
        const bad = walk((value as Record<string, unknown>)[key], `${path}.${key}`, seen);
        if (bad !== null) return bad;
      }
      if (Object.getOwnPropertySymbols(value).length > 0) return path;
      seen.delete(value);
      return null;
    }
    default:
      return path;
  }
};

/** Whether a value survives JSON unchanged (no undefined, NaN, -0, bigint, Date, cycles, …). */
export const isLosslessJson = (value: unknown): boolean => findNonJsonPath(value) === null;

/** Recursively freezes a JSON value in place and returns it. */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
};
