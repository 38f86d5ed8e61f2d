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

/**
 * Whether every object and array in `value` is frozen, plain (an array, or an object whose prototype is
 * `Object.prototype` or null, without symbol keys) and holds only such values, strings, booleans, null and numbers:
 * a value a store handed out deep-frozen, which a predicate written for JSON.parse output may read without changing
 * it. Numbers are not judged here (the predicates refuse -0 and non-finite ones themselves). O(the value).
 */
export const isFrozenPlainJson = (value: unknown): boolean => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'number':
      return true;
    case 'object': {
      if (value === null) return true;
      if (!Object.isFrozen(value)) return false;
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!isFrozenPlainJson(value[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value);
      if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0) return false;
      for (const key in value) if (!Object.hasOwn(value, key) || !isFrozenPlainJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
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
    return { ok: true, value: copy(value, new Set()) };
  } catch (e) {
    if (e instanceof Unreadable) return { ok: false, path: `$${e.segments.reverse().join('')}`, problem: e.problem };
    return { ok: false, path: '$', problem: `could not be read (${describeThrown(e)})` };
  }
};

/** Why a value cannot be snapshot; `segments` is its path from the failing value up, added while unwinding. */
class Unreadable {
  readonly segments: string[] = [];
  constructor(readonly problem: string) {}
}

const describeThrown = (e: unknown): string => {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : typeof e;
  } catch {
    return 'an unreadable error';
  }
};

const unreadable = (e: unknown): Unreadable => (e instanceof Unreadable ? e : new Unreadable(`could not be read (${describeThrown(e)})`));
/** Adds the segment that leads to a failing child to its path (the path is built only when something fails). */
const under = (e: unknown, segment: string): Unreadable => {
  const u = unreadable(e);
  u.segments.push(segment);
  return u;
};
const NOT_JSON = 'not lossless JSON';

/** The copy of `value` (every property read once), or throws Unreadable. */
const copy = (value: unknown, seen: Set<object>): unknown => {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      throw new Unreadable(NOT_JSON);
    case 'object': {
      if (value === null) return null;
      if (seen.has(value)) throw new Unreadable('a cycle');
      let isArray: boolean;
      try {
        isArray = Array.isArray(value);
      } catch (e) {
        throw unreadable(e);
      }
      seen.add(value);
      if (isArray) {
        const array = value as unknown[];
        let length: number;
        try {
          length = array.length;
        } catch (e) {
          throw unreadable(e);
        }
        const out: unknown[] = [];
        for (let i = 0; i < length; i++) {
          let item: unknown;
          try {
            if (!(i in array)) throw new Unreadable('not lossless JSON (a hole)');
            item = array[i];
          } catch (e) {
            throw under(e, `[${i}]`);
          }
          try {
            out.push(copy(item, seen));
          } catch (e) {
            throw under(e, `[${i}]`);
          }
        }
        seen.delete(value);
        return out;
      }
      let keys: string[];
      try {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) throw new Unreadable(NOT_JSON);
        if (Object.getOwnPropertySymbols(value).length > 0) throw new Unreadable('not lossless JSON (symbol keys)');
        keys = Object.keys(value);
      } catch (e) {
        throw unreadable(e);
      }
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        let child: unknown;
        try {
          child = copy((value as Record<string, unknown>)[key], seen);
        } catch (e) {
          throw under(e, `.${key}`);
        }
        // a key the copy inherits (`__proto__`, `toString`, …) is defined as an own data property, as JSON.parse makes
        // it: an assignment could set the prototype or call an inherited setter
        if (key in out) Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
        else out[key] = child;
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new Unreadable(NOT_JSON);
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

/**
 * Do two lossless JSON values serialize to the same text? The answer of `JSON.stringify(a) === JSON.stringify(b)`
 * (so key order counts), without building either text: compared in place, stopping at the first difference.
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
};

/**
 * A plain JSON object (not null, not an array): the one guard the readers of loosely typed data (event payloads,
 * sealed units, foreign log records) narrow with.
 */
export const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
