import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { chainInputOf, GENESIS_HASH, type ChainInput } from '../../domain/event-chain.js';
import { canonicalJson, sha256ChainHash } from '../../runtime/chain-hash.js';
import { isRuntimeError } from '../../runtime/errors.js';

/** The IEEE-754 double with these 16 hex digits. */
const double = (hex: string): number => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
};

describe('canonical JSON (RFC 8785)', () => {
  it('serializes the RFC 8785 example of section 3.2.2 byte for byte', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('sorts properties by UTF-16 code units (the example of section 3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    );
    const order = [
      ['\\r', 'Carriage Return'],
      ['1', 'One'],
      ['\u0080', 'Control'],
      ['\u00f6', 'Latin Small Letter O With Diaeresis'],
      ['\u20ac', 'Euro Sign'],
      ['\ud83d\ude00', 'Emoji: Grinning Face'],
      ['\ufb33', 'Hebrew Letter Dalet With Dagesh'],
    ];
    expect(canonicalJson(input)).toBe(`{${order.map(([k, v]) => `"${k}":"${v}"`).join(',')}}`);
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('formats the number of Appendix B %s as %s', (hex, expected) => {
    expect(canonicalJson(double(hex))).toBe(expected);
  });

  it('refuses what RFC 8785 refuses (lone surrogates, non-finite numbers) with a typed error', () => {
    for (const bad of [{ s: '\ud800' }, [Number.NaN], { n: Number.POSITIVE_INFINITY }]) {
      const e = (() => {
        try {
          canonicalJson(bad);
        } catch (x) {
          return x;
        }
        return null;
      })();
      expect(isRuntimeError(e) && e.code).toBe('non-json-event');
    }
  });
});

describe('canonical JSON: the one-pass fast path', () => {
  // the canonicalize package (a devDependency, pinned to a release for Node >= 18) is an independent implementation of
  // RFC 8785: steerlog's own code does not use it
  it('gives the bytes of the canonicalize package for any JSON value (and for what JSON.parse returns of it)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
        const reparsed = JSON.parse(JSON.stringify(v)) as unknown;
        expect(canonicalJson(reparsed)).toBe(canonicalize(reparsed));
      }),
      { numRuns: 300 },
    );
  });

  it('reads what is not plain JSON as JSON.stringify does (undefined members, toJSON, boxed values, deep nesting), in canonical form', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    class Point {
      constructor(
        readonly y: number,
        readonly x: number,
      ) {}
    }
    const odd: [unknown, string][] = [
      [{ a: undefined, b: 1, f: () => 1, s: Symbol('s') }, '{"b":1}'],
      [[1, undefined, () => 1, 2], '[1,null,null,2]'],
      [{ d: new Date(0), t: { toJSON: () => 'x' } }, '{"d":"1970-01-01T00:00:00.000Z","t":"x"}'],
      [[new Number(4), new String('s'), new Boolean(false)], '[4,"s",false]'],
      [Object.assign(Object.create(null), { z: 1, a: 2 }), '{"a":2,"z":1}'],
      [new Point(2, 1), '{"x":1,"y":2}'],
      [{ b: [{ toJSON: (key: string) => key }], a: { toJSON: (key: string) => key } }, '{"a":"a","b":["0"]}'],
      [deep, `${'['.repeat(20_000)}1${']'.repeat(20_000)}`],
    ];
    for (const [v, expected] of odd) {
      expect(canonicalJson(v)).toBe(expected);
      // the same bytes as for JSON.stringify's own reading of the value, taken back as plain JSON (not for the deep
      // one: JSON.stringify itself recurses, and runs out of stack there)
      if (v !== deep) expect(canonicalJson(JSON.parse(JSON.stringify(v)))).toBe(expected);
    }
  });

  it('refuses what has no JSON text: a cycle (even past a toJSON), a bigint, a bare undefined or function', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { inner: cycle };
    const viaToJson: Record<string, unknown> = {};
    viaToJson.t = { toJSON: () => viaToJson };
    for (const bad of [cycle, viaToJson, { n: 10n }, undefined, () => 1]) {
      expect(() => canonicalJson(bad)).toThrow(/RFC 8785/);
    }
  });

  it('keeps the canonical order for keys V8 itself orders otherwise, and a __proto__ key, in and out of order', () => {
    for (const text of [
      '{"b":1,"10":2,"9":3,"a":{"2":0,"10":1}}',
      '{"a":1,"b":[{"z":1,"__proto__":2}]}',
      '{"__proto__":{"y":1,"x":2},"a":0}',
      String.raw`{"k":"\\ud800 is text, not an escape","\\u":"x"}`,
      String.raw`{"a":"ok","b":{"c":"\\\\ud83d"}}`,
    ]) {
      const v = JSON.parse(text) as unknown;
      expect(canonicalJson(v)).toBe(canonicalize(v));
    }
  });

  it('refuses a lone surrogate in a key as in a value', () => {
    for (const bad of [{ '\udc00': 1 }, { a: { b: ['x', '\ud83d'] } }]) expect(() => canonicalJson(bad)).toThrow(/RFC 8785/);
  });

  it('gives the chain hash of a chain input with an undefined field the same result as canonicalize of the whole input', () => {
    const input = { ...chainInputOf('s', { seq: 0, id: 'e', time: 1, type: 't', data: { a: 1 } }, GENESIS_HASH), metadata: undefined } as unknown as ChainInput;
    expect(() => sha256ChainHash(input)).not.toThrow();
    expect(sha256ChainHash(input)).toBe(createHash('sha256').update(canonicalize(input)!).digest('hex'));
  });
});

describe('the chain hash', () => {
  it('is SHA-256 of the canonical chain input, and the input has exactly the documented fields', () => {
    const event = { seq: 0, id: 'e1', time: 5, type: 't', data: { b: 1, a: [2] } };
    const input = chainInputOf('s', event, GENESIS_HASH);
    expect(canonicalJson(input)).toBe(`{"data":{"a":[2],"b":1},"id":"e1","metadata":null,"prev":"${GENESIS_HASH}","seq":0,"stream":"s","time":5,"type":"t"}`);
    // computed independently: printf '%s' '<the line above>' | sha256sum
    expect(sha256ChainHash(input)).toBe('49dd02e3ec596b160260cd47b53c606a3ed384e6ac8eff2c45dce11a37c93cb0');
    expect(sha256ChainHash(input)).not.toBe(sha256ChainHash({ ...input, stream: 's2' }));
    expect(Object.keys(chainInputOf('s', { ...event, ignorable: true, metadata: { actor: 'a' } }, GENESIS_HASH)).sort()).toEqual(
      ['data', 'id', 'ignorable', 'metadata', 'prev', 'seq', 'stream', 'time', 'type'],
    );
  });

  // the fast path (one recursive pass, quoted strings and key texts cached, keys sorted only when out of order) must
  // give the bytes of the reference: SHA-256 over the canonicalize package's RFC 8785 text of the whole input
  const tricky = fc.oneof(
    fc.constantFrom(1e21, 1e-7, -0, 0, 0.1, 1 / 3, -1.5e300, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e20, 123456789012345680000),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom('', 'é', '€', '😀', 'a"b', 'back\\slash', 'tab\tnew\nline', '\u0000\u001f\u007f', '\u2028\u2029', '</script>', '\ud83d\ude00x'),
    fc.string({ unit: 'binary' }).filter((s) => (s as string & { isWellFormed(): boolean }).isWellFormed()),
  );
  const keyArb = fc.oneof(fc.string(), fc.constantFrom('a', 'b', 'B', '10', '9', 'é', '😀', '\u0001', 'toJSON', 'constructor', 'z"q'));
  const data = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, tricky, fc.boolean(), fc.constant(null), fc.integer(), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(keyArb, tie('value'), { maxKeys: 5 }),
  })).value;
  const event = fc.record({
    seq: fc.nat(),
    id: fc.oneof(fc.uuid(), fc.string()),
    time: fc.oneof(fc.nat(), fc.constantFrom(1e21, -0, 1.5)),
    type: fc.oneof(fc.constantFrom('agent/inbox/spliced', 'user/message'), fc.string({ unit: 'binary' }).filter((s) => (s as string & { isWellFormed(): boolean }).isWellFormed())),
    data,
    ignorable: fc.constantFrom(undefined, true as const),
    metadata: fc.option(fc.dictionary(fc.constantFrom('actor', 'correlationId', 'causationId', 'x'), fc.string({ minLength: 1 })), { nil: undefined }),
  });
  it('gives the reference hash (canonicalize, then SHA-256) for random events: unicode, escapes, 1e21, -0, nesting, any key order', () => {
    fc.assert(
      fc.property(event, fc.string(), (e, stream) => {
        const { ignorable, metadata, ...rest } = e;
        const fields = { ...rest, ...(ignorable ? { ignorable } : {}), ...(metadata !== undefined ? { metadata } : {}) };
        let prev = GENESIS_HASH;
        // the value as built and as JSON.parse returns it (another key order for integer-like keys, other objects),
        // twice in a row (so the second goes through the caches of the first, and prev is the hash just returned)
        for (const value of [fields, JSON.parse(JSON.stringify(fields)) as typeof fields]) {
          for (let i = 0; i < 2; i++) {
            const input = chainInputOf(stream, value, prev);
            const expected = createHash('sha256').update(canonicalize(input)!).digest('hex');
            expect(canonicalJson(input)).toBe(canonicalize(input));
            expect(sha256ChainHash(input)).toBe(expected);
            prev = expected;
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
