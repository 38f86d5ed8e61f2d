import * as crypto from 'node:crypto';
import type { ChainHashFn, ChainInput } from '../domain/event-chain.js';
import { RuntimeError } from './errors.js';

/** Thrown inside the fast path for anything it does not take; the general path then decides. */
const NOT_PLAIN = Symbol('not plain JSON');

/** No lone surrogate (String.prototype.isWellFormed: Node 20, not yet in this project's TypeScript lib). */
const wellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * RFC 8785 for plain JSON values (what JSON.parse returns: plain objects and arrays, finite numbers, well-formed
 * strings, booleans, null), in one recursive pass: keys sorted by UTF-16 code units (`Array.prototype.sort`'s
 * default order), strings and numbers as ECMAScript's JSON.stringify writes them (which RFC 8785 adopts). Anything
 * else — undefined, a function, a toJSON, a boxed primitive, a non-plain object, a lone surrogate, a non-finite
 * number, nesting deep enough to exhaust the stack — throws NOT_PLAIN (or RangeError), and `canonicalJson` hands the
 * value to `general`, which gives the same bytes or the same refusal. test/runtime/chain-hash.test.ts checks both
 * against the RFC's vectors and against an independent implementation (the `canonicalize` package, a
 * devDependency) on random values.
 */
const plain = (v: unknown): string => {
  switch (typeof v) {
    case 'string':
      if (!wellFormed(v)) throw NOT_PLAIN;
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw NOT_PLAIN;
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) throw NOT_PLAIN;
          out += i === 0 ? plain(v[i]) : `,${plain(v[i])}`;
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
      const o = v as Record<string, unknown>;
      if (typeof o.toJSON === 'function') throw NOT_PLAIN;
      const keys = Object.keys(o).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        if (!wellFormed(k)) throw NOT_PLAIN;
        out += `${i === 0 ? '' : ','}${JSON.stringify(k)}:${plain(o[k])}`;
      }
      return `${out}}`;
    }
    default:
      throw NOT_PLAIN;
  }
};

/**
 * The fastest path: `value` itself when every object in it already has its keys in canonical order, else a copy
 * whose objects do (only the objects out of order are copied), for JSON.stringify to write. Throws NOT_PLAIN for
 * anything but plain JSON, and for keys JSON.stringify would not keep in insertion order (array-index-like keys,
 * which V8 orders numerically) or that cannot be set on a copy (`__proto__`).
 */
const sortedKeys = (v: unknown): unknown => {
  if (typeof v !== 'object' || v === null) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return v;
    throw NOT_PLAIN;
  }
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
    let copy: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw NOT_PLAIN;
      const c = sortedKeys(v[i]);
      if (c !== v[i]) (copy ??= v.slice())[i] = c;
    }
    return copy ?? v;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let sorted = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const c0 = k.charCodeAt(0);
    if ((c0 >= 48 && c0 <= 57) || k === '__proto__') throw NOT_PLAIN;
    if (i > 0 && keys[i - 1]! > k) sorted = false;
  }
  if (!sorted) {
    keys.sort();
    const copy: Record<string, unknown> = {};
    for (const k of keys) copy[k] = sortedKeys(o[k]);
    return copy;
  }
  let copy: Record<string, unknown> | null = null;
  for (const k of keys) {
    const c = sortedKeys(o[k]);
    if (c !== o[k]) (copy ??= { ...o })[k] = c;
  }
  return copy ?? v;
};

/** RFC 8785 of a plain JSON value by the fast paths; throws NOT_PLAIN (or RangeError) when neither takes it. */
const fast = (value: unknown): string => {
  try {
    const text = JSON.stringify(sortedKeys(value));
    // JSON.stringify writes a lone surrogate as an escape where RFC 8785 refuses it: let the exact path decide
    if (!text.includes('\\ud')) return text;
  } catch (e) {
    if (e !== NOT_PLAIN && !(e instanceof RangeError)) throw e;
  }
  return plain(value);
};

/** A member JSON.stringify leaves out of an object (and writes as null in an array): undefined, a function, a symbol. */
const OMITTED = Symbol('omitted');

/** What JSON.stringify would serialize in place of `value` (its toJSON, a boxed primitive's value), or OMITTED. */
const resolve = (value: unknown, key: string): unknown => {
  let v = value;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(key: string): unknown }).toJSON(key);
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  return v === undefined || typeof v === 'function' || typeof v === 'symbol' ? OMITTED : v;
};

/** A container being written: an array and its next index, or an object, its sorted keys and the next one. */
type Open = { readonly array: readonly unknown[]; readonly of: object; i: number } | { readonly keys: readonly string[]; readonly object: Record<string, unknown>; readonly of: object; i: number; wrote: boolean };

/**
 * RFC 8785 of any value JSON.stringify can write, with JSON.stringify's own reading of it (toJSON, boxed primitives,
 * undefined, function and symbol members left out of objects and written as null in arrays, own enumerable keys of
 * any object), keys sorted by UTF-16 code units. Iterative, so nesting depth costs memory, not stack. Throws a plain
 * Error (for `canonicalJson` to type) for what RFC 8785 refuses: a lone surrogate, a non-finite number, a bigint, a
 * cycle, a value with no JSON representation at all.
 */
const general = (root: unknown): string => {
  const seen = new Set<object>();
  const stack: Open[] = [];
  let out = '';
  const write = (v: unknown): void => {
    switch (typeof v) {
      case 'string':
        if (!wellFormed(v)) throw new Error('a lone surrogate is not allowed');
        out += JSON.stringify(v);
        return;
      case 'number':
        if (!Number.isFinite(v)) throw new Error(`${v} is not allowed`);
        out += JSON.stringify(v);
        return;
      case 'boolean':
        out += v ? 'true' : 'false';
        return;
      case 'object': {
        if (v === null) {
          out += 'null';
          return;
        }
        if (seen.has(v)) throw new Error('a circular reference');
        seen.add(v);
        if (Array.isArray(v)) {
          out += '[';
          stack.push({ array: v, of: v, i: 0 });
          return;
        }
        const keys = Object.keys(v).sort();
        for (const k of keys) if (!wellFormed(k)) throw new Error('a lone surrogate is not allowed (in a key)');
        out += '{';
        stack.push({ keys, object: v as Record<string, unknown>, of: v, i: 0, wrote: false });
        return;
      }
      default:
        throw new Error(`a ${typeof v} has no JSON representation`);
    }
  };
  const first = resolve(root, '');
  if (first === OMITTED) throw new Error('no JSON representation');
  write(first);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if ('array' in top) {
      if (top.i >= top.array.length) {
        out += ']';
        seen.delete(top.of);
        stack.pop();
        continue;
      }
      const i = top.i++;
      if (i > 0) out += ',';
      const v = resolve(top.array[i], String(i));
      if (v === OMITTED) out += 'null';
      else write(v);
      continue;
    }
    let member: { key: string; value: unknown } | null = null;
    while (top.i < top.keys.length) {
      const key = top.keys[top.i++]!;
      const value = resolve(top.object[key], key);
      if (value !== OMITTED) {
        member = { key, value };
        break;
      }
    }
    if (member === null) {
      out += '}';
      seen.delete(top.of);
      stack.pop();
      continue;
    }
    out += `${top.wrote ? ',' : ''}${JSON.stringify(member.key)}:`;
    top.wrote = true;
    write(member.value);
  }
  return out;
};

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization of a JSON value: sorted keys (by UTF-16 code units), no
 * whitespace, ECMAScript number formatting. Throws `RuntimeError('non-json-event')` for what RFC 8785 refuses
 * (a lone surrogate in a string, a non-finite number).
 */
export const canonicalJson = (value: unknown): string => {
  try {
    return fast(value);
  } catch (e) {
    if (e !== NOT_PLAIN && !(e instanceof RangeError)) throw e;
  }
  try {
    return general(value);
  } catch (e) {
    throw new RuntimeError('non-json-event', `cannot serialize canonically (RFC 8785): ${(e as Error).message}`, { cause: e });
  }
};

// one-shot digest where Node has it (20.12+): no Hash object per event
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
const sha256Hex: (text: string) => string = oneShot
  ? (text) => oneShot('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/** The canonical text of a chain input: its fields in their (sorted) order around the canonical data and metadata. */
const chainText = (input: ChainInput): string => {
  const ignorable = (input as { ignorable?: unknown }).ignorable;
  if ((ignorable !== undefined && ignorable !== true) || Object.keys(input).length !== (ignorable ? 9 : 8)) return canonicalJson(input);
  try {
    return templated(input, ignorable === true);
  } catch {
    return canonicalJson(input); // a field RFC 8785 cannot write (or an undefined one, which it leaves out): say so as a whole
  }
};
/** A string or number field: written directly (the common case), else by canonicalJson (which may refuse it). */
const scalar = (v: unknown): string =>
  (typeof v === 'string' && wellFormed(v)) || (typeof v === 'number' && Number.isFinite(v)) ? JSON.stringify(v) : canonicalJson(v);

/**
 * The texts of the fields that repeat from one event to the next — the stream, the event types, and `prev`, which
 * is the hash this module returned for the event before — kept from the last calls (a string compares equal to
 * its cached twin by content, so a cache hit writes exactly what `scalar` would).
 */
let lastStream: string | null = null;
let lastStreamText = '';
const typeTexts = new Map<string, string>();
const TYPE_TEXTS_MAX = 256;
let lastHash: string | null = null;
const streamText = (stream: string): string => {
  if (stream !== lastStream) {
    lastStreamText = scalar(stream);
    lastStream = stream;
  }
  return lastStreamText;
};
const typeText = (type: string): string => {
  let text = typeTexts.get(type);
  if (text === undefined) {
    text = scalar(type);
    if (typeTexts.size < TYPE_TEXTS_MAX) typeTexts.set(type, text);
  }
  return text;
};
// a hash this module computed is 64 hex digits: nothing in it to escape
const prevText = (prev: string): string => (prev === lastHash ? `"${prev}"` : scalar(prev));

const templated = (input: ChainInput, ignorable: boolean): string =>
  `{"data":${canonicalJson(input.data)},"id":${scalar(input.id)},${ignorable ? '"ignorable":true,' : ''}"metadata":${input.metadata === null ? 'null' : canonicalJson(input.metadata)},"prev":${prevText(input.prev)},"seq":${scalar(input.seq)},"stream":${streamText(input.stream)},"time":${scalar(input.time)},"type":${typeText(input.type)}}`;

/** The chain's digest: lowercase hex SHA-256 of the RFC 8785 serialization of the chain input. */
export const sha256ChainHash: ChainHashFn = (input: ChainInput): string => (lastHash = sha256Hex(chainText(input)));
