import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snapshotJson } from '../../domain/json.js';

/**
 * snapshotJson builds the path of a failure only when something fails (it used to build every property's path as
 * it went, and a result object per value). The model: the previous implementation, kept here as it was; both must
 * agree on every value — the same copy, or the same path and problem.
 */
type Snap = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly path: string; readonly problem: string };

const referenceSnapshot = (value: unknown): Snap => {
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

const copy = (value: unknown, path: string, seen: Set<object>): Snap => {
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


/** Values with what a snapshot must refuse or survive: getters (throwing ones too), holes, cycles, odd numbers, inherited keys. */
const tricky = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(0, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '', 's', true, null, undefined, 10n, Symbol('x'), () => 1, new Date(0)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', '__proto__', 'toString', 'constructor', 'x y'), tie('value'), { maxKeys: 3 }),
    tie('special'),
  ),
  special: fc.oneof(
    tie('value').map((v) => Object.defineProperty({ k: 1 }, 'g', { get: () => v, enumerable: true })),
    fc.constant(Object.defineProperty({}, 'bad', { get: () => { throw new TypeError('no'); }, enumerable: true })),
    fc.constant(new Proxy({}, { ownKeys: () => { throw new Error('trap'); } })),
    fc.constant([1, , 3]),
    fc.constant((() => { const o: Record<string, unknown> = { a: 1 }; o.self = o; return o; })()),
    fc.constant({ [Symbol('s')]: 1 }),
    fc.constant(Object.create(null) as object),
  ),
})).value;

describe('snapshotJson', () => {
  it('agrees with the previous implementation on every value: the same copy, or the same path and problem', () => {
    fc.assert(
      fc.property(tricky, (v) => {
        const now = snapshotJson(v);
        const before = referenceSnapshot(v);
        // node's deep-strict equality: own keys, values and prototypes (jest's would compare a `constructor` key as the constructor)
        expect(isDeepStrictEqual(now, before)).toBe(true);
        if (now.ok && before.ok) expect(JSON.stringify(now.value)).toBe(JSON.stringify(before.value));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps a `__proto__` key as an own data property and never calls an inherited setter', () => {
    const parsed = JSON.parse('{"__proto__":{"x":1},"a":2}') as object;
    const s = snapshotJson(parsed);
    expect(s.ok && Object.getPrototypeOf(s.value)).toBe(Object.prototype);
    expect(s.ok && Object.keys(s.value as object)).toEqual(['__proto__', 'a']);
    expect(isDeepStrictEqual(s, referenceSnapshot(parsed))).toBe(true);
  });
});
