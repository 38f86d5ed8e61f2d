/**
 * The protobuf wire format as the OTLP encoding writes it (`otlp-protobuf.ts`): wire types and tags, varints, fixed
 * numbers, times as the SDK states them, UTF-8 strings, hex ids as bytes, length-delimited fields whose length is
 * written once their content is, and `AnyValue`s.
 * @internal
 */

/** Protobuf wire type: a varint. */
export const VARINT = 0;
/** Protobuf wire type: 8 bytes (fixed64, double). */
export const I64 = 1;
/** Protobuf wire type: length-delimited (string, bytes, message). */
export const LEN = 2;
/** Protobuf wire type: 4 bytes (fixed32). */
export const I32 = 5;
/** A field's tag: its number and wire type. */
export const tag = (field: number, wire: number): number => (field << 3) | wire;

/** The range of a protobuf int64: an integer attribute inside it is written as an int, else as a double. */
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** The number of bytes of `v` (a non-negative integer below 2^32) as a varint. */
export const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

/** A growable byte buffer the request is written into, kept from one request to the next. */
export class Writer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  readonly #utf8 = new TextEncoder();

  constructor(size = 64 * 1024) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  /** Room for `n` more bytes. */
  need(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A varint of a non-negative integer below 2^32. */
  uvarint(v: number): void {
    this.need(5);
    const b = this.buf;
    while (v > 0x7f) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  /** A varint of any integer in [-2^63, 2^63): 64-bit two's complement, 10 bytes when negative. */
  int64(v: number): void {
    if (v >= 0 && v <= 0xffffffff) return this.uvarint(v);
    const neg = v < 0;
    const a = neg ? -v : v;
    let lo = a >>> 0;
    let hi = (a / 0x100000000) >>> 0;
    if (neg) {
      lo = ~lo >>> 0;
      hi = ~hi >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    this.need(10);
    const b = this.buf;
    while (hi > 0 || lo > 0x7f) {
      b[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[this.pos++] = lo;
  }

  fixed32(v: number): void {
    this.need(4);
    this.view.setUint32(this.pos, v >>> 0, true);
    this.pos += 4;
  }

  double(v: number): void {
    this.need(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** Epoch ms as the SDK states it (`hrTime`), written as the fixed64 nanoseconds since the epoch. */
  time(ms: number): void {
    // hrTime(ms) without its pair: the same two numbers, no array per time written
    const s = Math.floor(ms / 1000);
    const ns = Math.round((ms - s * 1000) * 1e6);
    // s·1e9 + ns in two 32-bit halves: s = hi16·2^16 + lo16, each product exact below 2^53
    const lo16 = s % 0x10000;
    const hi16 = (s - lo16) / 0x10000;
    const a = lo16 * 1e9 + ns; // < 2^53
    const b = hi16 * 1e9; // to be multiplied by 2^16
    const bLow16 = b % 0x10000;
    const low = a % 0x100000000 + bLow16 * 0x10000;
    const high = Math.floor(a / 0x100000000) + (b - bLow16) / 0x10000 + Math.floor(low / 0x100000000);
    this.need(8);
    this.view.setUint32(this.pos, low >>> 0, true);
    this.view.setUint32(this.pos + 4, high >>> 0, true);
    this.pos += 8;
  }

  /** A string's UTF-8 bytes, length-prefixed (ill-formed UTF-16 as the TextEncoder writes it: U+FFFD). */
  string(s: string): void {
    const n = s.length;
    // one byte reserved for the length: every string shorter than 128 bytes needs no move
    this.need(n * 3 + 5);
    const b = this.buf;
    const start = this.pos + 1;
    let p = start;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      b[p++] = c;
    }
    if (i < n) p += this.#utf8.encodeInto(s.slice(i), b.subarray(p)).written;
    this.pos = p;
    this.closeLength(start - 1, 1, p - start);
  }

  /** 16 or 8 bytes of lowercase or uppercase hex, length-prefixed. */
  hexBytes(hex: string): void {
    const n = hex.length >>> 1;
    this.need(n + 1);
    const b = this.buf;
    let p = this.pos;
    b[p++] = n;
    for (let i = 0; i < 2 * n; i += 2) b[p++] = (HEX[hex.charCodeAt(i) & 0x7f]! << 4) | HEX[hex.charCodeAt(i + 1) & 0x7f]!;
    this.pos = p;
  }

  /** Bytes as they are (a field encoded before), no length prefix. */
  raw(v: Uint8Array): void {
    this.need(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  bytes(v: Uint8Array): void {
    this.uvarint(v.length);
    this.need(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  /** Starts a length-delimited field's content: `reserve` bytes left for its length. Returns where the length goes. */
  open(reserve: number): number {
    this.need(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /**
   * Ends a length-delimited field opened at `at` with `reserved` bytes, its content written from `at + reserved` up
   * to `pos`: the content moves when its length takes more or fewer bytes than reserved.
   */
  close(at: number, reserved: number): void {
    this.closeLength(at, reserved, this.pos - at - reserved);
  }

  /** {@link close} of `length` content bytes at `at + reserved`, written up to `pos`; `pos` ends after them. */
  closeLength(at: number, reserved: number, length: number): void {
    const size = varintSize(length);
    const from = at + reserved;
    if (size !== reserved) {
      this.need(size - reserved);
      this.buf.copyWithin(at + size, from, from + length);
    }
    const b = this.buf;
    let v = length;
    let p = at;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p] = v;
    this.pos = at + size + length;
  }
}

/** Each hex digit's value by its character code (0–9, a–f, A–F). */
const HEX = (() => {
  const t = new Uint8Array(128);
  for (let c = 0; c < 10; c++) t[48 + c] = c;
  for (let c = 0; c < 6; c++) t[97 + c] = t[65 + c] = 10 + c;
  return t;
})();

/** An attribute value as `AnyValue`'s content. */
export const anyValue = (w: Writer, v: unknown): void => {
  switch (typeof v) {
    case 'string':
      w.uvarint(tag(1, LEN));
      w.string(v);
      return;
    case 'boolean':
      w.uvarint(tag(2, VARINT));
      w.uvarint(v ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(v) && v >= MIN_INT64 && v < MAX_INT64) {
        w.uvarint(tag(3, VARINT));
        w.int64(v);
      } else {
        w.uvarint(tag(4, I64));
        w.double(v);
      }
      return;
    default:
      if (v instanceof Uint8Array) {
        w.uvarint(tag(7, LEN));
        w.bytes(v);
      } else if (Array.isArray(v)) {
        w.uvarint(tag(5, LEN)); // array_value: ArrayValue { repeated AnyValue values = 1 }
        const at = w.open(1);
        for (const item of v as unknown[]) {
          w.uvarint(tag(1, LEN));
          const it = w.open(1);
          anyValue(w, item);
          w.close(it, 1);
        }
        w.close(at, 1);
      } else if (typeof v === 'object' && v !== null) {
        w.uvarint(tag(6, LEN)); // kvlist_value: KeyValueList { repeated KeyValue values = 1 }
        const at = w.open(1);
        for (const k in v) {
          if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
          w.uvarint(tag(1, LEN));
          const kv = w.open(1);
          w.uvarint(tag(1, LEN));
          w.string(k);
          w.uvarint(tag(2, LEN));
          const val = w.open(1);
          anyValue(w, (v as Record<string, unknown>)[k]);
          w.close(val, 1);
          w.close(kv, 1);
        }
        w.close(at, 1);
      }
    // null, undefined: an empty AnyValue
  }
};

/** The bytes of `v` (a non-negative integer below 2^32) as a varint. */
export const varintBytes = (v: number): number[] => {
  const out: number[] = [];
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
};
