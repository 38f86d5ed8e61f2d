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

/** What `snapshotJson` returns: a detached plain copy, or where the value stops being lossless JSON and why. */
export type JsonSnapshot =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly path: string; readonly problem: string };

/**
 * A detached plain copy of a lossless JSON value, reading every property exactly once: a throwing getter or Proxy
 * trap, a value that is not lossless JSON (see `findNonJsonPath`) or a cycle is reported with its path instead of
 * thrown. What is admitted is the copy, so a getter that answers differently on a second read changes nothing.
 */
export const snapshotJson = (value: unknown): JsonSnapshot => {
  try {
    return copy(value, '$', new Set());
  } catch (e) {
    if (e instanceof Unreadable) return { ok: false, path: e.path, problem: e.problem };
    return { ok: false, path: '$', problem: `could not be read (${describeThrown(e)})` };
  }
};

class Unreadable {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {}
}

const describeThrown = (e: unknown): string => {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : typeof e;
  } catch {
    return 'an unreadable error';
  }
};

const read = <T>(path: string, f: () => T): T => {
  try {
    return f();
  } catch (e) {
    if (e instanceof Unreadable) throw e;
    throw new Unreadable(path, `could not be read (${describeThrown(e)})`);
  }
};

const copy = (value: unknown, path: string, seen: Set<object>): JsonSnapshot => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return { ok: true, value };
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? { ok: true, value } : { ok: false, path, problem: 'not lossless JSON' };
    case 'object': {
      if (value === null) return { ok: true, value };
      if (seen.has(value)) return { ok: false, path, problem: 'a cycle' };
      const isArray = read(path, () => Array.isArray(value));
      seen.add(value);
      if (isArray) {
        const length = read(path, () => (value as unknown[]).length);
        const out: unknown[] = [];
        for (let i = 0; i < length; i++) {
          const at = `${path}[${i}]`;
          const item = read(at, () => (i in (value as unknown[]) ? { v: (value as unknown[])[i] } : null));
          if (item === null) return { ok: false, path: at, problem: 'not lossless JSON (a hole)' };
          const c = copy(item.v, at, seen);
          if (!c.ok) return c;
          out.push(c.value);
        }
        seen.delete(value);
        return { ok: true, value: out };
      }
      const proto = read(path, () => Object.getPrototypeOf(value));
      if (proto !== Object.prototype && proto !== null) return { ok: false, path, problem: 'not lossless JSON' };
      if (read(path, () => Object.getOwnPropertySymbols(value).length) > 0) return { ok: false, path, problem: 'not lossless JSON (symbol keys)' };
      const keys = read(path, () => Object.keys(value));
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const at = `${path}.${key}`;
        const c = copy(read(at, () => (value as Record<string, unknown>)[key]), at, seen);
        if (!c.ok) return c;
        Object.defineProperty(out, key, { value: c.value, enumerable: true, writable: true, configurable: true });
      }
      seen.delete(value);
      return { ok: true, value: out };
    }
    default:
      return { ok: false, path, problem: 'not lossless JSON' };
  }
};

/** A short description of any value for an error message; never throws (BigInts, cycles, Proxies, throwing getters). */
export const describeValue = (value: unknown): string => {
  try {
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return Array.isArray(value) ? 'an array' : typeof value;
  }
};
