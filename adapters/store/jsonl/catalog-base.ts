import { compareCatalogRows, type CatalogedSession } from '../../../runtime/ports/session-catalog.js';
import { decodeRow, encodeRow, type CatalogRow } from './catalog-fold.js';
import { crc32 } from './line-codec.js';

/**
 * The session catalog's base, version 2: rows a reader looks up and pages without decoding them all.
 *
 *   {"c":"<crc32 of the body>","n":<body bytes>,"v":2}
 *   {"upTo":…,"key":…,"rows":N,"broken":B,"order":O,"hashes":H}      (the meta line)
 *   one row per line (catalog-fold.ts's encodeRow), in catalog order (createdAt, then id)
 *   the order section at O: N offsets of 10 hex digits, row k's line (offsets from the end of the meta line)
 *   the hash section at H: N entries of 26 + 8 characters, a stream file hash and its row's rank, by hash
 *
 * Loading checks the checksum of the whole body (native CRC-32: about a millisecond per 4 MB) and reads the meta
 * line; a row is decoded only when a page or a lookup reaches it, so a first page or a stream's last revision costs
 * a binary search and the rows read, not the number of rows. Version 1 bases (every row decoded at load) are still read.
 */
export const BASE_VERSION = 2;

/** Which index record the base's last position is checked against (catalog-files.ts's CatalogKey). */
type CatalogKey = readonly [hash: string, lineCrc: number] | null;

const OFFSET_HEX = 10;
const HASH_CHARS = 26;
const HASH_ENTRY = HASH_CHARS + 8;
const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** Meta of a version 2 base. */
interface BaseMeta {
  readonly upTo: number;
  readonly key: CatalogKey;
  readonly rows: number;
  readonly broken: number;
  readonly order: number;
  readonly hashes: number;
}

/** The bytes of a version 2 base of `rows` (any order) as of the first `upTo` positions. */
export const encodeBaseV2 = (upTo: number, key: CatalogKey, rows: readonly CatalogRow[]): Buffer => {
  const sorted = [...rows].sort((a, b) => compareCatalogRows(a.row, b.row));
  const lines = sorted.map((r) => Buffer.from(`${JSON.stringify(encodeRow(r))}\n`, 'utf8'));
  const offsets: number[] = [];
  let at = 0;
  for (const l of lines) {
    offsets.push(at);
    at += l.length;
  }
  const order = Buffer.from(`${offsets.map((o) => hex(o, OFFSET_HEX)).join('')}\n`, 'latin1');
  const byHash = sorted.map((r, rank) => [r.hash, rank] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const hashes = Buffer.from(`${byHash.map(([h, rank]) => `${h}${hex(rank, 8)}`).join('')}\n`, 'latin1');
  const meta = { upTo, key, rows: sorted.length, broken: sorted.filter((r) => r.row.status === 'broken').length, order: at, hashes: at + order.length };
  const body = Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`, 'utf8'), ...lines, order, hashes]);
  return Buffer.concat([Buffer.from(`${JSON.stringify({ c: hex(crc32(body), 8), n: body.length, v: BASE_VERSION })}\n`, 'utf8'), body]);
};

const isKey = (v: unknown): v is CatalogKey => v === null || (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * A version 2 base as read: the rows decoded on demand. Immutable (the bytes are never changed), so a view handed out
 * (the first stream read's seed) keeps saying what the base said.
 */
export class CatalogBaseView {
  readonly upTo: number;
  readonly key: CatalogKey;
  /** Rows in the base. */
  readonly count: number;
  /** Rows in the base whose status is `broken`. */
  readonly broken: number;
  readonly #bytes: Buffer;
  readonly #rows: number;
  readonly #order: number;
  readonly #hashes: number;

  private constructor(bytes: Buffer, rowsStart: number, meta: BaseMeta) {
    this.#bytes = bytes;
    this.#rows = rowsStart;
    this.upTo = meta.upTo;
    this.key = meta.key;
    this.count = meta.rows;
    this.broken = meta.broken;
    this.#order = rowsStart + meta.order;
    this.#hashes = rowsStart + meta.hashes;
  }

  /** The view of `bytes` (a whole base file), or undefined when they are not a whole, checked version 2 base. */
  static of(bytes: Buffer): CatalogBaseView | undefined {
    const nl = bytes.indexOf(0x0a);
    if (nl < 0) return undefined;
    try {
      const head = JSON.parse(bytes.toString('utf8', 0, nl)) as { c?: unknown; n?: unknown; v?: unknown };
      if (head.v !== BASE_VERSION || typeof head.c !== 'string' || head.n !== bytes.length - nl - 1 || hex(crc32(bytes, nl + 1), 8) !== head.c) return undefined;
      const metaEnd = bytes.indexOf(0x0a, nl + 1);
      if (metaEnd < 0) return undefined;
      const meta = JSON.parse(bytes.toString('utf8', nl + 1, metaEnd)) as Partial<Record<keyof BaseMeta, unknown>>;
      if (!isCount(meta.upTo) || !isKey(meta.key) || !isCount(meta.rows) || !isCount(meta.broken) || !isCount(meta.order) || !isCount(meta.hashes)) return undefined;
      const rowsStart = metaEnd + 1;
      if (rowsStart + meta.hashes + meta.rows * HASH_ENTRY + 1 !== bytes.length || meta.order + meta.rows * OFFSET_HEX + 1 !== meta.hashes) return undefined;
      return new CatalogBaseView(bytes, rowsStart, meta as BaseMeta);
    } catch {
      return undefined;
    }
  }

  /** The row of rank `rank` (catalog order). @throws Error when the base does not hold one there (it passed its checksum: a bug) */
  rowAt(rank: number): CatalogRow {
    const b = this.#bytes;
    const p = this.#order + rank * OFFSET_HEX;
    const start = this.#rows + parseInt(b.toString('latin1', p, p + OFFSET_HEX), 16);
    const end = b.indexOf(0x0a, start);
    const row = decodeRow(JSON.parse(b.toString('utf8', start, end)));
    if (!row) throw new Error(`sessions.catalog: row ${rank} does not decode`);
    return row;
  }

  /** The rank of the first row after (`createdAt`, `sessionId`) in catalog order (binary search). */
  rankAfter(cursor: Pick<CatalogedSession, 'createdAt' | 'sessionId'>): number {
    return this.#firstRank((row) => compareCatalogRows(row, cursor as CatalogedSession) > 0);
  }

  /**
   * The rank of the last row before (`createdAt`, `sessionId`) in catalog order (binary search): where a newest-first
   * page resumes. -1 when no row is before it.
   */
  rankBefore(cursor: Pick<CatalogedSession, 'createdAt' | 'sessionId'>): number {
    return this.#firstRank((row) => compareCatalogRows(row, cursor as CatalogedSession) >= 0) - 1;
  }

  /** The first rank whose row passes `from` (false up to some rank, true from it on), `count` when none does. */
  #firstRank(from: (row: CatalogedSession) => boolean): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (from(this.rowAt(mid).row)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The row of the stream file hash `hash` (binary search), undefined when the base holds none. */
  byHash(hash: string): CatalogRow | undefined {
    const b = this.#bytes;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.#hashes + mid * HASH_ENTRY;
      const h = b.toString('latin1', p, p + HASH_CHARS);
      if (h === hash) return this.rowAt(parseInt(b.toString('latin1', p + HASH_CHARS, p + HASH_ENTRY), 16));
      if (h < hash) lo = mid + 1;
      else hi = mid;
    }
    return undefined;
  }

  /** Every row, in catalog order. */
  *rows(from = 0): Generator<CatalogRow> {
    for (let rank = from; rank < this.count; rank++) yield this.rowAt(rank);
  }
}
