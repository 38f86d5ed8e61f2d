import * as crypto from 'node:crypto';
import type { ChainHashFn, ChainInput } from '../domain/event-chain.js';
import { RuntimeError } from './errors.js';

/** Thrown inside the fast path for anything it does not take; the general path then decides. */
const NOT_PLAIN = Symbol('not plain JSON');

/** No lone surrogate (String.prototype.isWellFormed: Node 20, not yet in this project's TypeScript lib). */
const wellFormed = (s: string): boolean => (s as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * What a JSON string may hold without JSON.stringify escaping anything or RFC 8785 refusing it: no quote, no
 * backslash, no control character, no surrogate (a pair is fine, a lone one is refused: either is left to the exact
 * check). A string that matches none is written as its own text between quotes.
 */
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A well-formed string as JSON.stringify writes it (which RFC 8785 adopts); throws NOT_PLAIN for a lone surrogate. */
const quoted = (s: string): string => {
  if (!NEEDS_CARE.test(s)) return `"${s}"`;
  if (!wellFormed(s)) throw NOT_PLAIN;
  return JSON.stringify(s);
};

/**
 * A finite number as RFC 8785 writes it: ECMAScript's ToString (`-0` as `0`), which JSON.stringify writes. Not
 * `${n}` / `'' + n`, which give the same text through V8's number-string cache: every new number's string is kept
 * there, outlives a scavenge or two and is promoted, and at a few fresh numbers per event (seq, time, positions) that
 * grows a long check's young generation to its most (about 25 MiB of peak RSS in `verify` at a million events).
 */
const numberText = (n: number): string => JSON.stringify(n);

/**
 * The text of a member's key and its colon, by key: object keys repeat from one event to the next (a log has a few
 * dozen), so each is checked and quoted once. Bounded, so data with ever new keys costs a check per key, not memory.
 */
const keyTexts = new Map<string, string>();
const KEY_TEXTS_MAX = 4096;
const keyText = (k: string): string => {
  let text = keyTexts.get(k);
  if (text === undefined) {
    text = `${quoted(k)}:`;
    if (keyTexts.size < KEY_TEXTS_MAX) keyTexts.set(k, text);
  }
  return text;
};

/**
 * Sorts `keys` by UTF-16 code units (`>` on strings, `Array.prototype.sort`'s default order), knowing the ones before
 * `from` are in order: by insertion for the few keys of an object in an event (the builtin sort's set-up costs more
 * than the sort there), by the builtin beyond.
 */
const sortFrom = (keys: string[], from: number): void => {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = from; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = k;
  }
};

/**
 * RFC 8785 for plain JSON values (what JSON.parse returns: plain objects and arrays, finite numbers, well-formed
 * strings, booleans, null), in one recursive pass: keys sorted by UTF-16 code units (`Array.prototype.sort`'s
 * default order, and `>` on strings; an object whose keys come in that order already, as a canonical writer leaves
 * them, is not sorted), strings and numbers as ECMAScript's JSON.stringify writes them (which RFC 8785 adopts:
 * `JSON.stringify(n)` is the same ToString for a finite number, -0 included: see numberText). Anything else — undefined (a hole reads as one),
 * a function, a toJSON, a boxed primitive, a non-plain object, a lone surrogate, a non-finite number, nesting deep
 * enough to exhaust the stack — throws NOT_PLAIN (or RangeError), and `canonicalJson` hands the value to `general`,
 * which gives the same bytes or the same refusal. test/runtime/chain-hash.test.ts checks both against the RFC's
 * vectors and against an independent implementation (the `canonicalize` package, a devDependency) on random values.
 */
const plain = (v: unknown): string => {
  switch (typeof v) {
    case 'string':
      return quoted(v);
    case 'number':
      if (!Number.isFinite(v)) throw NOT_PLAIN;
      return numberText(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
        if (v.length === 0) return '[]';
        let out = `[${plain(v[0])}`;
        for (let i = 1; i < v.length; i++) out += `,${plain(v[i])}`;
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
      const o = v as Record<string, unknown>;
      if (typeof o.toJSON === 'function') throw NOT_PLAIN;
      const keys = Object.keys(o);
      if (keys.length === 0) return '{}';
      for (let i = 1; i < keys.length; i++) {
        if (keys[i - 1]! > keys[i]!) {
          sortFrom(keys, i);
          break;
        }
      }
      let out = `{${keyText(keys[0]!)}${plain(o[keys[0]!])}`;
      for (let i = 1; i < keys.length; i++) out += `,${keyText(keys[i]!)}${plain(o[keys[i]!])}`;
      return `${out}}`;
    }
    default:
      throw NOT_PLAIN;
  }
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
    return plain(value);
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

/** The own enumerable keys of `input` (for…in sees inherited ones too: an object that has any is not a plain input). */
const fieldCount = (input: ChainInput): number => {
  let n = 0;
  for (const _ in input) n++;
  return n;
};

/** The canonical text of a chain input: its fields in their (sorted) order around the canonical data and metadata. */
const chainText = (input: ChainInput): string => {
  const ignorable = (input as { ignorable?: unknown }).ignorable;
  if ((ignorable !== undefined && ignorable !== true) || fieldCount(input) !== (ignorable ? 9 : 8)) return canonicalJson(input);
  try {
    return templated(input, ignorable === true);
  } catch {
    return canonicalJson(input); // a field RFC 8785 cannot write (or an undefined one, which it leaves out): say so as a whole
  }
};
/** A string or number field: written directly (the common case), else by canonicalJson (which may refuse it). */
const scalar = (v: unknown): string => {
  if (typeof v === 'number' && Number.isFinite(v)) return numberText(v);
  if (typeof v === 'string') {
    try {
      return quoted(v);
    } catch {
      // a lone surrogate: canonicalJson refuses it with its typed error
    }
  }
  return canonicalJson(v);
};

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
