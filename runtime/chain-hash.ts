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

/**
 * The chain text written straight into bytes: the fast path of `sha256ChainHash`.
 *
 * The same RFC 8785 text as `chainText` for a chain input of plain JSON, written as UTF-8 into one buffer that is
 * kept from one hash to the next and handed to SHA-256 as it is: no string per member, no rope to flatten, no UTF-8
 * copy in the binding, nothing for the garbage collector. Strings are copied one code unit at a time (escaping what
 * JSON.stringify escapes, refusing a lone surrogate), safe integers written digit by digit, other numbers through
 * `numberText`, keys sorted only when they are out of order (as `plain` does). Anything else throws NOT_PLAIN (or
 * RangeError, for nesting deep enough to exhaust the stack), and `sha256ChainHash` hashes `chainText` instead, which
 * gives the same bytes or the typed refusal.
 */
let bytes = new Uint8Array(4096);
/** Bytes written so far. */
let at = 0;
/** A buffer grown past this by one large event is let go after its hash, not kept for every one after it. */
const BYTES_KEPT_MAX = 1 << 20;

/** Makes room for `n` more bytes. */
const room = (n: number): void => {
  if (at + n <= bytes.length) return;
  let size = bytes.length * 2;
  while (size < at + n) size *= 2;
  const grown = new Uint8Array(size);
  grown.set(bytes.subarray(0, at));
  bytes = grown;
  views = [];
};

/** Views of the buffer's first n bytes, by n (the chain texts of a log have a few hundred lengths): no view per hash. */
let views: Uint8Array[] = [];
const VIEWS_MAX = 4096;
const written = (): Uint8Array => {
  if (at >= VIEWS_MAX) return bytes.subarray(0, at);
  let view = views[at];
  if (view === undefined) views[at] = view = bytes.subarray(0, at);
  return view;
};

/** The UTF-8 bytes of an ASCII text written as it is (the chain input's fixed parts). */
const asciiBytes = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const writeBytes = (b: Uint8Array): void => {
  room(b.length);
  for (let i = 0; i < b.length; i++) bytes[at++] = b[i]!;
};
/** An ASCII text (a number's ToString) as its bytes. */
const writeAscii = (text: string): void => {
  room(text.length);
  for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
};

const HEX = asciiBytes('0123456789abcdef');

/**
 * A string as JSON.stringify writes it (RFC 8785 adopts it), in UTF-8: `"` and `\` escaped with a backslash, the
 * control characters as `\b \t \n \f \r` or `\u00xx` (lowercase hex), everything else as it is. A lone
 * surrogate throws NOT_PLAIN.
 */
const writeString = (s: string): void => {
  const n = s.length;
  room(6 * n + 2); // at most 6 bytes per code unit (a \u00xx escape); 3 or 4 bytes per 1 or 2 units otherwise
  const b = bytes;
  let p = at;
  b[p++] = 0x22;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
        b[p++] = c;
        continue;
      }
      b[p++] = 0x5c;
      switch (c) {
        case 0x22:
        case 0x5c:
          b[p++] = c;
          break;
        case 0x08:
          b[p++] = 0x62; // b
          break;
        case 0x09:
          b[p++] = 0x74; // t
          break;
        case 0x0a:
          b[p++] = 0x6e; // n
          break;
        case 0x0c:
          b[p++] = 0x66; // f
          break;
        case 0x0d:
          b[p++] = 0x72; // r
          break;
        default:
          b[p++] = 0x75; // u00xx
          b[p++] = 0x30;
          b[p++] = 0x30;
          b[p++] = HEX[c >> 4]!;
          b[p++] = HEX[c & 15]!;
      }
    } else if (c < 0x800) {
      b[p++] = 0xc0 | (c >> 6);
      b[p++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    } else {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c > 0xdbff || d < 0xdc00 || d > 0xdfff) throw NOT_PLAIN;
      i++;
      const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
      b[p++] = 0xf0 | (cp >> 18);
      b[p++] = 0x80 | ((cp >> 12) & 0x3f);
      b[p++] = 0x80 | ((cp >> 6) & 0x3f);
      b[p++] = 0x80 | (cp & 0x3f);
    }
  }
  b[p++] = 0x22;
  at = p;
};

/** Writes the decimal digits of `n`, an integer in [0, 2^31), with int32 arithmetic. */
const writeDigits = (n: number): void => {
  let digits = 1;
  while (digits < 10 && n >= POW10[digits]!) digits++;
  let p = at + digits;
  at = p;
  while (n >= 10) {
    const q = (n / 10) | 0;
    bytes[--p] = 0x30 + n - q * 10;
    n = q;
  }
  bytes[--p] = 0x30 + n;
};
/** Writes the 8 decimal digits of `n`, an integer in [0, 10^8), zeros first. */
const writeEightDigits = (n: number): void => {
  let p = at + 8;
  at = p;
  for (let i = 0; i < 8; i++) {
    const q = (n / 10) | 0;
    bytes[--p] = 0x30 + n - q * 10;
    n = q;
  }
};
/** 10^0 … 10^9, to count an int32's digits. */
const POW10 = Array.from({ length: 10 }, (_, i) => 10 ** i);

/**
 * A finite number as RFC 8785 writes it. A safe integer's ToString is its decimal digits (`-` before a negative one,
 * `0` for -0), written here without a string: by int32 arithmetic below 2^31, else as two parts below 10^8 each
 * (the high part is below 2^53 / 10^8 < 2^31; both are exact in a double); any other number's text is `numberText`'s.
 */
const writeNumber = (v: number): void => {
  if (!Number.isSafeInteger(v)) {
    if (!Number.isFinite(v)) throw NOT_PLAIN;
    writeAscii(numberText(v));
    return;
  }
  room(17);
  let n = v;
  if (n < 0) {
    bytes[at++] = 0x2d;
    n = -n;
  }
  if (n < 0x80000000) {
    writeDigits(n);
    return;
  }
  let high = Math.floor(n / 1e8);
  let low = n - high * 1e8;
  if (low < 0) {
    // not reached (the quotient's rounding is below 10^-8 here); kept so the split cannot be off by one
    high--;
    low += 1e8;
  } else if (low >= 1e8) {
    high++;
    low -= 1e8;
  }
  writeDigits(high);
  writeEightDigits(low);
};

/** Any plain JSON value (what `plain` takes), written as `plain` writes it. */
const writeValue = (v: unknown): void => {
  switch (typeof v) {
    case 'string':
      writeString(v);
      return;
    case 'number':
      writeNumber(v);
      return;
    case 'boolean':
      writeBytes(v ? TRUE : FALSE);
      return;
    case 'object': {
      if (v === null) {
        writeBytes(NULL);
        return;
      }
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
        room(2);
        bytes[at++] = 0x5b;
        for (let i = 0; i < v.length; i++) {
          if (i > 0) {
            room(1);
            bytes[at++] = 0x2c;
          }
          writeValue(v[i]);
        }
        room(1);
        bytes[at++] = 0x5d;
        return;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
      const o = v as Record<string, unknown>;
      if (typeof o.toJSON === 'function') throw NOT_PLAIN;
      const keys = Object.keys(o);
      for (let i = 1; i < keys.length; i++) {
        if (keys[i - 1]! > keys[i]!) {
          sortFrom(keys, i);
          break;
        }
      }
      room(1);
      bytes[at++] = 0x7b;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        if (i > 0) {
          room(1);
          bytes[at++] = 0x2c;
        }
        writeString(k);
        room(1);
        bytes[at++] = 0x3a;
        writeValue(o[k]);
      }
      room(1);
      bytes[at++] = 0x7d;
      return;
    }
    default:
      throw NOT_PLAIN;
  }
};

const TRUE = asciiBytes('true');
const FALSE = asciiBytes('false');
const NULL = asciiBytes('null');
const DATA = asciiBytes('{"data":');
const ID = asciiBytes(',"id":');
const IGNORABLE = asciiBytes(',"ignorable":true');
const METADATA = asciiBytes(',"metadata":');
const PREV = asciiBytes(',"prev":');
const SEQ = asciiBytes(',"seq":');
const STREAM = asciiBytes(',"stream":');
const TIME = asciiBytes(',"time":');
const TYPE = asciiBytes(',"type":');

/** The UTF-8 bytes of a text `quoted` wrote (so the same bytes `writeString` writes for its string). */
const utf8Bytes = (text: string): Uint8Array => {
  const b = Buffer.from(text, 'utf8');
  return new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};

/**
 * The chain input's fields that repeat from one event to the next, as the bytes around them: the stream between
 * its key and the time's key (one stream per log), the type between its key and the closing brace (a few dozen
 * types), both checked and quoted once (`quoted` throws NOT_PLAIN for what it cannot write, as `writeString` would).
 */
let streamOf: string | null = null;
let streamPart: Uint8Array = new Uint8Array(0);
const typeParts = new Map<string, Uint8Array>();
const TYPE_PARTS_MAX = 256;
const writeStreamPart = (stream: string): void => {
  if (stream !== streamOf) {
    streamPart = utf8Bytes(`,"stream":${quoted(stream)},"time":`);
    streamOf = stream;
  }
  writeBytes(streamPart);
};
const writeTypePart = (type: string): void => {
  let part = typeParts.get(type);
  if (part === undefined) {
    part = utf8Bytes(`,"type":${quoted(type)}}`);
    if (typeParts.size < TYPE_PARTS_MAX) typeParts.set(type, part);
  }
  writeBytes(part);
};
/**
 * `,"metadata":null,"prev":"<prev>","seq":` when there is no metadata and `prev` is the hash this module returned last
 * (64 lowercase hex digits: nothing to check or escape), in one copy.
 */
const NULL_METADATA_PREV = asciiBytes(',"metadata":null,"prev":"');
const PREV_END_SEQ = asciiBytes('","seq":');
const writeNullMetadataOwnHash = (hash: string): void => {
  room(NULL_METADATA_PREV.length + 64 + PREV_END_SEQ.length);
  const b = bytes;
  let p = at;
  for (let i = 0; i < NULL_METADATA_PREV.length; i++) b[p++] = NULL_METADATA_PREV[i]!;
  for (let i = 0; i < 64; i++) b[p++] = hash.charCodeAt(i);
  for (let i = 0; i < PREV_END_SEQ.length; i++) b[p++] = PREV_END_SEQ[i]!;
  at = p;
};

/** Is the buffer in use (a getter of the input hashing another one from inside)? That call takes the string path. */
let writing = false;

/** The chain text of `input` (a chain input of plain JSON with exactly its fields) as bytes, or NOT_PLAIN. */
const writeChainText = (input: ChainInput, ignorable: boolean): void => {
  at = 0;
  writeBytes(DATA);
  writeValue(input.data);
  writeBytes(ID);
  writeValue(input.id);
  if (ignorable) writeBytes(IGNORABLE);
  const metadata = input.metadata;
  const prev = input.prev;
  if (metadata === null && prev === lastHash) writeNullMetadataOwnHash(prev);
  else {
    writeBytes(METADATA);
    writeValue(metadata);
    writeBytes(PREV);
    writeValue(prev);
    writeBytes(SEQ);
  }
  writeValue(input.seq);
  const stream = input.stream;
  if (typeof stream === 'string') writeStreamPart(stream);
  else {
    writeBytes(STREAM);
    writeValue(stream);
    writeBytes(TIME);
  }
  writeValue(input.time);
  const type = input.type;
  if (typeof type === 'string') writeTypePart(type);
  else {
    writeBytes(TYPE);
    writeValue(type);
    room(1);
    bytes[at++] = 0x7d;
  }
};

/** SHA-256 of the chain text written into the buffer, as lowercase hex, or null when the fast path does not take `input`. */
const bytesHash = (input: ChainInput): string | null => {
  const ignorable = (input as { ignorable?: unknown }).ignorable;
  if ((ignorable !== undefined && ignorable !== true) || fieldCount(input) !== (ignorable ? 9 : 8) || writing) return null;
  writing = true;
  try {
    writeChainText(input, ignorable === true);
    return oneShotBytes ? oneShotBytes('sha256', written(), 'hex') : crypto.createHash('sha256').update(written()).digest('hex');
  } catch (e) {
    if (e !== NOT_PLAIN && !(e instanceof RangeError)) throw e;
    return null;
  } finally {
    writing = false;
    if (bytes.length > BYTES_KEPT_MAX) {
      bytes = new Uint8Array(4096);
      views = [];
    }
  }
};
const oneShotBytes = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'hex') => string }).hash;

/** The chain's digest: lowercase hex SHA-256 of the RFC 8785 serialization of the chain input. */
export const sha256ChainHash: ChainHashFn = (input: ChainInput): string => (lastHash = bytesHash(input) ?? sha256Hex(chainText(input)));
