import * as zlib from 'node:zlib';

/**
 * Byte formats of the JSONL store: checksummed stream lines and fixed-size global index records.
 *
 * Stream line (one per event, plus one header line opening each file), plain JSON that `jq` reads:
 *   {"c":"<crc32 of the inner JSON, 8 hex>","e":{"rev":0,"pos":12,"id":"…","type":"…","time":…,"data":…,"metadata":…,"hash":"…"}}
 * (`ignorable`, `metadata` and `hash` only when present; lines written before they existed have none.)
 *   {"c":"<crc32>","h":{"format":"steerlog-jsonl-stream","version":1,"stream":"<stream id>"}}
 * The checksum covers exactly the bytes of the inner object, from byte 20 to the closing brace.
 */

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

/** CRC-32 (IEEE, as zlib and PNG) of `bytes[start..end)`; zlib's native one where Node has it (≥ 20.15). */
export const crc32 = (bytes: Uint8Array, start = 0, end = bytes.length): number =>
  // a plain Uint8Array view costs less to make than a Buffer's `subarray`
  nativeCrc32 ? nativeCrc32(new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start)) >>> 0 : crc32Portable(bytes, start, end);

/** The table-driven CRC-32 used when zlib has none. */
export const crc32Portable = (bytes: Uint8Array, start = 0, end = bytes.length): number => {
  let crc = -1;
  for (let i = start; i < end; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
};

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');

export const STREAM_FORMAT = 'steerlog-jsonl-stream';
export const STREAM_FORMAT_VERSION = 1;
/** Length of `{"c":"xxxxxxxx","e":` — where the checksummed inner object starts. */
const INNER_START = 20;
const NEWLINE = 0x0a;

export interface StoredEvent {
  readonly rev: number;
  readonly pos: number;
  readonly id: string;
  readonly type: string;
  readonly time: number;
  readonly data: unknown;
  readonly ignorable?: true;
  /** Provenance, kept verbatim (absent in lines written before it existed). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The writer's chain hash, kept verbatim (absent in lines written before the chain existed). */
  readonly hash?: string;
  /**
   * The first global position of the commit that wrote this line (every line of one commit carries the same
   * value). Recovery uses it to tell the one unfinished commit a crash can leave (`g` equal to the index's
   * committed count) from committed lines whose index records were lost (`g` past it). Absent in lines written
   * before it existed.
   */
  readonly g?: number;
}

export interface EncodedLine {
  readonly bytes: Buffer;
  readonly crc: number;
}

/** One buffer for the whole line: the checksum's 8 hex digits are written into it once the inner bytes are known. */
const encode = (key: 'e' | 'h', inner: string): EncodedLine => {
  const bytes = Buffer.from(`{"c":"00000000","${key}":${inner}}\n`, 'utf8');
  const crc = crc32(bytes, INNER_START, bytes.length - 2);
  bytes.write(hex8(crc), 6, 'latin1');
  return { bytes, crc };
};

/**
 * The line of an event. Its inner object is `JSON.stringify` of `{rev, pos, id, type, time, data, ignorable?,
 * metadata?, hash?, g?}`, written out field by field so that data serialized already can be reused: `dataJson`, when
 * given, must be `JSON.stringify(e.data)` (the session log's, see runtime/ports/checked-events.ts).
 */
export const encodeEventLine = (e: StoredEvent, dataJson: string = JSON.stringify(e.data)): EncodedLine =>
  encode(
    'e',
    `{"rev":${JSON.stringify(e.rev)},"pos":${JSON.stringify(e.pos)},"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"time":${JSON.stringify(e.time)},"data":${dataJson}` +
      `${e.ignorable ? ',"ignorable":true' : ''}${e.metadata !== undefined ? `,"metadata":${JSON.stringify(e.metadata)}` : ''}${e.hash !== undefined ? `,"hash":${JSON.stringify(e.hash)}` : ''}${e.g === undefined ? '' : `,"g":${JSON.stringify(e.g)}`}}`,
  );

export const encodeHeaderLine = (stream: string): EncodedLine =>
  encode('h', JSON.stringify({ format: STREAM_FORMAT, version: STREAM_FORMAT_VERSION, stream }));

export type DecodedLine =
  | { readonly kind: 'event'; readonly event: StoredEvent; readonly crc: number }
  | { readonly kind: 'header'; readonly stream: string; readonly crc: number };

/** The bytes of `{"c":"` and of `","?":`, where the checksummed inner object starts (see the format above). */
const HEAD_OPEN = [0x7b, 0x22, 0x63, 0x22, 0x3a, 0x22];
const HEAD_CLOSE = [0x22, 0x2c, 0x22, -1, 0x22, 0x3a];
const KEY_E = 0x65;
const KEY_H = 0x68;

/**
 * The stored checksum of a line's head `{"c":"<8 lowercase hex>","e":` (or `"h":`), read byte by byte at fixed
 * offsets (no string, no regular expression: every read decodes every line); -1 when the head is not that.
 */
const storedCrcOf = (bytes: Uint8Array, at: number): number => {
  for (let i = 0; i < 6; i++) if (bytes[at + i] !== HEAD_OPEN[i]) return -1;
  let crc = 0;
  for (let i = at + 6; i < at + 14; i++) {
    const d = HEX_VALUE[bytes[i]!]!;
    if (d < 0) return -1;
    crc = crc * 16 + d;
  }
  for (let i = 0; i < 6; i++) if (i !== 3 && bytes[at + 14 + i] !== HEAD_CLOSE[i]) return -1;
  const key = bytes[at + 17];
  return key === KEY_E || key === KEY_H ? crc : -1;
};

/** Decodes one line (without its newline). Returns a reason string when the line is damaged. */
export const decodeLine = (line: Uint8Array): DecodedLine | string =>
  decodeLineAt(Buffer.isBuffer(line) ? line : Buffer.from(line.buffer, line.byteOffset, line.length), 0, line.length);

/**
 * `decodeLine` of the line `bytes[start..end)` (without its newline), read in place: no view of the line is made
 * but the one the checksum needs.
 */
export const decodeLineAt = (bytes: Buffer, start: number, end: number): DecodedLine | string => {
  if (end - start < INNER_START + 3) return 'line too short';
  const stored = storedCrcOf(bytes, start);
  if (stored < 0) return 'not a steerlog line';
  if (bytes[end - 1] !== 0x7d) return 'line does not end with }';
  const crc = crc32(bytes, start + INNER_START, end - 1);
  if (crc !== stored) return `checksum mismatch (stored ${hex8(stored)}, computed ${hex8(crc)})`;
  let inner: unknown;
  try {
    inner = JSON.parse(bytes.toString('utf8', start + INNER_START, end - 1));
  } catch {
    return 'checksum matches but the JSON does not parse';
  }
  if (typeof inner !== 'object' || inner === null) return 'inner value is not an object';
  const o = inner as Record<string, unknown>;
  if (bytes[start + 17] === KEY_H) {
    if (o.format !== STREAM_FORMAT || o.version !== STREAM_FORMAT_VERSION || typeof o.stream !== 'string') {
      return `unknown header ${JSON.stringify(o).slice(0, 80)}`;
    }
    return { kind: 'header', stream: o.stream, crc };
  }
  if (
    !Number.isSafeInteger(o.rev) ||
    !Number.isSafeInteger(o.pos) ||
    typeof o.id !== 'string' ||
    typeof o.type !== 'string' ||
    typeof o.time !== 'number' ||
    !('data' in o) ||
    (o.ignorable !== undefined && o.ignorable !== true) ||
    (o.g !== undefined && (!Number.isSafeInteger(o.g) || (o.g as number) < 0 || (o.g as number) > (o.pos as number)))
  ) {
    return 'event line lacks rev, pos, id, type, time or data';
  }
  if (o.metadata !== undefined && (typeof o.metadata !== 'object' || o.metadata === null || Array.isArray(o.metadata))) {
    return 'event line metadata is not an object';
  }
  if (o.hash !== undefined && typeof o.hash !== 'string') return 'event line hash is not a string';
  return { kind: 'event', event: o as unknown as StoredEvent, crc };
};

/** Index of the first newline in `bytes[from..]`, or -1. */
export const indexOfNewline = (bytes: Uint8Array, from: number): number => bytes.indexOf(NEWLINE, from);

/*
 * Global index record: one per event, fixed width so that position p lives at byte p * INDEX_RECORD_BYTES.
 *   "<file hash, 26> <line offset, 16 hex> <line length, 8 hex> <line crc, 8 hex> <E|-> <record crc, 8 hex>" padded, "\n"
 * `E` marks the last event of an append batch: records after the last `E` are an unfinished batch.
 */
export const INDEX_RECORD_BYTES = 80;
const RECORD_BODY = 63;

export interface IndexRecord {
  readonly fileHash: string;
  readonly offset: number;
  readonly length: number;
  readonly lineCrc: number;
  readonly batchEnd: boolean;
}

export const encodeIndexRecord = (r: IndexRecord, into: Buffer, at: number): void => {
  const body = `${r.fileHash} ${r.offset.toString(16).padStart(16, '0')} ${hex8(r.length)} ${hex8(r.lineCrc)} ${r.batchEnd ? 'E' : '-'} `;
  // the body goes in first, then its checksum (over the body, without the space after it) and the padding
  const n = into.write(body, at, INDEX_RECORD_BYTES, 'ascii');
  const crc = crc32(into, at, at + n - 1);
  into.write(`${hex8(crc)}`.padEnd(INDEX_RECORD_BYTES - 1 - n, ' ') + '\n', at + n, INDEX_RECORD_BYTES - n, 'ascii');
};

const HEX_VALUE = (() => {
  const t = new Int8Array(256).fill(-1);
  for (let c = 0; c < 10; c++) t[48 + c] = c;
  for (let c = 0; c < 6; c++) t[97 + c] = 10 + c;
  return t;
})();
const SPACE = 0x20;

/** The value of the lowercase hex digits `bytes[from, from + n)`, or -1 when one is not a hex digit. */
const hexAt = (bytes: Buffer, from: number, n: number): number => {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const d = HEX_VALUE[bytes[i]!]!;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
};

/**
 * Decodes the record at `bytes[at..at+80)`, or returns a reason string. Byte by byte at fixed offsets (no string
 * conversion or regular expression: opening a store decodes every record of its index).
 */
export const decodeIndexRecord = (bytes: Buffer, at: number): IndexRecord | string => {
  const malformed = 'malformed index record';
  if (at + INDEX_RECORD_BYTES > bytes.length) return malformed;
  for (let i = at; i < at + 26; i++) {
    const c = bytes[i]!;
    if (!((c >= 97 && c <= 122) || (c >= 50 && c <= 55))) return malformed;
  }
  for (const k of [26, 43, 52, 61, 63]) if (bytes[at + k] !== SPACE) return malformed;
  for (let i = at + 72; i < at + INDEX_RECORD_BYTES - 1; i++) if (bytes[i] !== SPACE) return malformed;
  if (bytes[at + INDEX_RECORD_BYTES - 1] !== NEWLINE) return malformed;
  const mark = bytes[at + 62];
  if (mark !== 0x45 && mark !== 0x2d) return malformed;
  const offset = hexAt(bytes, at + 27, 16);
  const length = hexAt(bytes, at + 44, 8);
  const lineCrc = hexAt(bytes, at + 53, 8);
  const recordCrc = hexAt(bytes, at + 64, 8);
  if (offset < 0 || length < 0 || lineCrc < 0 || recordCrc < 0) return malformed;
  if (crc32(bytes, at, at + RECORD_BODY) !== recordCrc) return 'index record checksum mismatch';
  return { fileHash: bytes.toString('latin1', at, at + 26), offset, length, lineCrc, batchEnd: mark === 0x45 };
};
