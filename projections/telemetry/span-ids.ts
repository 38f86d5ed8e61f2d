/**
 * Deterministic trace and span ids: the same session exported twice (live, then later from the store) gets the same
 * ids. A 64-bit FNV-1a hash over the UTF-16 code units of a key, computed in pure JavaScript (this layer does no I/O
 * and imports no platform module); a trace id is two such hashes of differently salted keys.
 */

const OFFSET_HI = 0xcbf29ce4;
const OFFSET_LO = 0x84222325;
// FNV-1a 64-bit prime 0x100000001b3 = 2^40 + 0x1b3: multiply (hi, lo) by it in 32-bit halves.
const PRIME_LO = 0x1b3;

/** The FNV-1a 64 state after the last {@link fnvStep}: high and low 32 bits (module state: no pair allocated per hash). */
let stateHi = 0;
let stateLo = 0;

/** Steps the FNV-1a 64 state (high and low 32 bits) from `hi`, `lo` over `key`'s UTF-16 code units into `stateHi`, `stateLo`. */
const fnvStep = (hi: number, lo: number, key: string): void => {
  for (let i = 0; i < key.length; i++) {
    lo ^= key.charCodeAt(i);
    // (hi * 2^32 + lo) * (2^40 + 0x1b3) mod 2^64
    const loProduct = (lo & 0xffff) * PRIME_LO;
    const loHigh = (lo >>> 16) * PRIME_LO + (loProduct >>> 16);
    const newLo = ((loHigh & 0xffff) << 16) | (loProduct & 0xffff);
    const carry = Math.floor(loHigh / 0x10000);
    const newHi = (Math.imul(hi, PRIME_LO) + carry + (lo << 8)) >>> 0;
    hi = newHi;
    lo = newLo >>> 0;
  }
  stateHi = hi;
  stateLo = lo;
};

/** The decimal digits of a seq, last first (scratch of {@link fnvSlashSeq}). */
const DIGITS = new Uint8Array(16);

/** Steps the state over `/${seq}`: its code units, the digits of a safe non-negative integer without a string. */
const fnvSlashSeq = (seq: number): void => {
  if (!Number.isSafeInteger(seq) || seq < 0) return fnvStep(stateHi, stateLo, `/${seq}`);
  let n = 0;
  let v = seq;
  do {
    DIGITS[n++] = 48 + (v % 10);
    v = Math.floor(v / 10);
  } while (v > 0);
  let hi = stateHi;
  let lo = stateLo;
  for (let i = n; i >= 0; i--) {
    lo ^= i === n ? 47 : DIGITS[i]!; // '/' first, then the digits from the most significant
    const loProduct = (lo & 0xffff) * PRIME_LO;
    const loHigh = (lo >>> 16) * PRIME_LO + (loProduct >>> 16);
    const newLo = ((loHigh & 0xffff) << 16) | (loProduct & 0xffff);
    const carry = Math.floor(loHigh / 0x10000);
    hi = (Math.imul(hi, PRIME_LO) + carry + (lo << 8)) >>> 0;
    lo = newLo >>> 0;
  }
  stateHi = hi;
  stateLo = lo;
};

/** The character code of each hex digit's lowercase character. */
const HEX_CODE = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** `x`'s hex digit at bit `shift` (`x` a 32-bit value). */
const digit = (x: number, shift: number): number => HEX_CODE[(x >>> shift) & 0xf]!;
/** 16 lowercase hex digits of (hi, lo), made as one flat string (no partial strings joined). */
const hex64 = (hi: number, lo: number): string =>
  String.fromCharCode(
    digit(hi, 28), digit(hi, 24), digit(hi, 20), digit(hi, 16), digit(hi, 12), digit(hi, 8), digit(hi, 4), digit(hi, 0),
    digit(lo, 28), digit(lo, 24), digit(lo, 20), digit(lo, 16), digit(lo, 12), digit(lo, 8), digit(lo, 4), digit(lo, 0),
  );

/**
 * FNV-1a 64 of `key`'s UTF-16 code units, as 16 lowercase hex digits (for an ASCII key, the FNV-1a 64 of its bytes).
 */
export const fnv1a64Hex = (key: string): string => {
  fnvStep(OFFSET_HI, OFFSET_LO, key);
  return hex64(stateHi, stateLo);
};

const ZERO_SPAN = '0000000000000000';
const ZERO_TRACE = ZERO_SPAN + ZERO_SPAN;

/** A non-zero id (OTLP reserves the all-zero ids for "none"). */
const nonZero = (hex: string): string => (hex === ZERO_SPAN || hex === ZERO_TRACE ? `${hex.slice(0, -1)}1` : hex);

/** The trace id of a session: 32 lowercase hex digits, a function of the session id alone. */
export const traceIdOf = (sessionId: string): string => nonZero(fnv1a64Hex(`steerlog/trace/a/${sessionId}`) + fnv1a64Hex(`steerlog/trace/b/${sessionId}`));

/**
 * The id of a span of `sessionId` that `what` names (a span kind) and the event at `seq` opens: 16 lowercase hex
 * digits.
 */
export const spanIdOf = (sessionId: string, what: string, seq: number): string => nonZero(fnv1a64Hex(`steerlog/span/${sessionId}/${what}/${seq}`));

/**
 * {@link spanIdOf} for one session, with the hash of the session's key prefix computed once: `spanIdsOf(s)(what, seq)`
 * equals `spanIdOf(s, what, seq)`, at the cost of hashing `what` and `seq` only (a derivation makes one per span).
 */
export const spanIdsOf = (sessionId: string): ((what: string, seq: number) => string) => {
  fnvStep(OFFSET_HI, OFFSET_LO, `steerlog/span/${sessionId}/`);
  const hi0 = stateHi;
  const lo0 = stateLo;
  return (what, seq) => {
    // the hash of `${what}/${seq}`, without making that string
    fnvStep(hi0, lo0, what);
    fnvSlashSeq(seq);
    return nonZero(hex64(stateHi, stateLo));
  };
};
