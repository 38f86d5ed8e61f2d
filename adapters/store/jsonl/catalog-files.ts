import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeChange, decodeRow, encodeChange, encodeRow, type CatalogChange, type CatalogRow } from './catalog-fold.js';
import { crc32 } from './line-codec.js';
import { CatalogBaseView, encodeBaseV2 } from './catalog-base.js';

/**
 * The session catalog's two files, beside the store's (docs/store-jsonl.md, "The session catalog"):
 *
 * - `sessions.catalog`, the base: every row as of the first `upTo` global positions. A first line
 *   `{"c":"<crc32>","n":<bytes>}` checksums the rest: a line `{"upTo":…,"key":[hash,crc]|null}` and one row per line.
 * - `sessions.catalog.log`: one line per commit made since, `{"c":"<crc32>","k":{"f":from,"u":to,"v":key,"s":[…]}}`,
 *   the changes the commit made to each stream's row (catalog-fold.ts).
 *
 * `key` is the stream file hash and line checksum of the index record at `upTo - 1` (`to - 1`): a reader compares it
 * with the index, so a catalog that an index rebuilt, rolled back or lost under it no longer matches is folded again
 * from the index instead of being believed. Both files are a cache of a fold of the committed log, never data: they
 * are written with node:fs directly (not the store's injectable file system) and never fsynced; a torn or missing
 * file costs a longer fold, nothing else.
 */
export const CATALOG_FILE = 'sessions.catalog';
/** The catalog log: one line per commit since the base. */
export const CATALOG_LOG_FILE = 'sessions.catalog.log';

/** Which index record a catalog position is checked against: its stream file hash and line checksum. */
export type CatalogKey = readonly [hash: string, lineCrc: number] | null;

/** The base as read: its rows and the positions they cover. */
export interface CatalogBase {
  readonly upTo: number;
  readonly key: CatalogKey;
  readonly rows: readonly CatalogRow[];
}

/** One commit's line of the catalog log. */
export interface CatalogLogLine {
  readonly from: number;
  readonly to: number;
  readonly key: CatalogKey;
  readonly changes: readonly CatalogChange[];
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0');
const isKey = (v: unknown): v is CatalogKey => v === null || (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The bytes of a version 1 base (every row decoded at load); {@link writeBase} writes version 2. */
export const encodeBase = (base: CatalogBase): Buffer => {
  const body = Buffer.from([JSON.stringify({ upTo: base.upTo, key: base.key }), ...base.rows.map((r) => JSON.stringify(encodeRow(r)))].join('\n') + '\n', 'utf8');
  return Buffer.concat([Buffer.from(`${JSON.stringify({ c: hex8(crc32(body)), n: body.length })}\n`, 'utf8'), body]);
};

/** The base in `bytes`; undefined when they are not a whole, checked base. */
export const decodeBase = (bytes: Buffer): CatalogBase | undefined => {
  const nl = bytes.indexOf(0x0a);
  if (nl < 0) return undefined;
  try {
    const head = JSON.parse(bytes.toString('utf8', 0, nl)) as { c?: unknown; n?: unknown };
    if (typeof head.c !== 'string' || head.n !== bytes.length - nl - 1 || hex8(crc32(bytes, nl + 1)) !== head.c) return undefined;
    const lines = bytes.toString('utf8', nl + 1).split('\n');
    const meta = JSON.parse(lines[0]!) as { upTo?: unknown; key?: unknown };
    if (!isCount(meta.upTo) || !isKey(meta.key)) return undefined;
    const rows: CatalogRow[] = [];
    for (let i = 1; i < lines.length; i++) {
      if (lines[i] === '') continue;
      const row = decodeRow(JSON.parse(lines[i]!));
      if (!row) return undefined;
      rows.push(row);
    }
    return { upTo: meta.upTo, key: meta.key, rows };
  } catch {
    return undefined;
  }
};

/** A log line's bytes. */
export const encodeLogLine = (line: CatalogLogLine): Buffer => {
  const inner = Buffer.from(JSON.stringify({ f: line.from, u: line.to, v: line.key, s: line.changes.map(encodeChange) }), 'utf8');
  return Buffer.concat([Buffer.from(`{"c":"${hex8(crc32(inner))}","k":`, 'ascii'), inner, Buffer.from('}\n', 'ascii')]);
};

const INNER_START = 20;

/**
 * The whole, checked lines of the log in `bytes`, in order, up to the first that is not one (a torn or damaged
 * line ends them), and the byte length they take.
 */
export const decodeLogLines = (bytes: Buffer): { readonly lines: CatalogLogLine[]; readonly end: number } => {
  const lines: CatalogLogLine[] = [];
  let at = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, at);
    if (nl < 0) break;
    const line = decodeLogLine(bytes, at, nl);
    if (!line) break;
    lines.push(line);
    at = nl + 1;
  }
  return { lines, end: at };
};

const decodeLogLine = (bytes: Buffer, start: number, nl: number): CatalogLogLine | undefined => {
  if (nl - start < INNER_START + 2 || bytes[nl - 1] !== 0x7d) return undefined;
  const m = /^\{"c":"([0-9a-f]{8})","k":$/.exec(bytes.toString('latin1', start, start + INNER_START));
  if (!m || hex8(crc32(bytes, start + INNER_START, nl - 1)) !== m[1]) return undefined;
  try {
    const o = JSON.parse(bytes.toString('utf8', start + INNER_START, nl - 1)) as { f?: unknown; u?: unknown; v?: unknown; s?: unknown };
    if (!isCount(o.f) || !isCount(o.u) || o.u <= o.f || !isKey(o.v) || !Array.isArray(o.s)) return undefined;
    const changes: CatalogChange[] = [];
    for (const v of o.s) {
      const c = decodeChange(v);
      if (!c) return undefined;
      changes.push(c);
    }
    return { from: o.f, to: o.u, key: o.v, changes };
  } catch {
    return undefined;
  }
};

/**
 * The base file of the store in `dir`: a version 2 base as a view (rows decoded on demand, catalog-base.ts), a
 * version 1 base decoded whole, or undefined when it is missing or not a whole, checked base.
 */
export const readBaseFile = async (dir: string): Promise<CatalogBaseView | CatalogBase | undefined> => {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, CATALOG_FILE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return CatalogBaseView.of(bytes) ?? decodeBase(bytes);
};

/**
 * Writes a new base, version 2 (catalog-base.ts), as a temporary file renamed over the old one: a reader sees the
 * old base or the new one. Answers its size in bytes.
 */
export const writeBase = async (dir: string, base: CatalogBase): Promise<number> => {
  const tmp = join(dir, `${CATALOG_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const bytes = encodeBaseV2(base.upTo, base.key, base.rows);
    await writeFile(tmp, bytes);
    await rename(tmp, join(dir, CATALOG_FILE));
    return bytes.length;
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
};

/**
 * The log's bytes from `offset`, unless the file is not the one `identity` names (it was replaced: then from 0);
 * `identity` is the file's (device and inode), `from` where the bytes start. No bytes when it is missing.
 */
export const readLogFrom = async (dir: string, offset: number, identity: string): Promise<{ readonly bytes: Buffer; readonly from: number; readonly identity: string }> => {
  let handle;
  try {
    handle = await open(join(dir, CATALOG_LOG_FILE), 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { bytes: Buffer.alloc(0), from: 0, identity: '' };
    throw e;
  }
  try {
    const st = await handle.stat();
    const id = `${st.dev}:${st.ino}`;
    if (id !== identity) offset = 0;
    const size = st.size;
    if (size <= offset) return { bytes: Buffer.alloc(0), from: offset, identity: id };
    const bytes = Buffer.alloc(size - offset);
    let done = 0;
    while (done < bytes.length) {
      const { bytesRead } = await handle.read(bytes, done, bytes.length - done, offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return { bytes: bytes.subarray(0, done), from: offset, identity: id };
  } finally {
    await handle.close();
  }
};

/** The base's size in bytes (0 when missing). */
export const baseSize = async (dir: string): Promise<number> => {
  try {
    return (await stat(join(dir, CATALOG_FILE))).size;
  } catch {
    return 0;
  }
};

/** The log's size in bytes (0 when missing). */
export const logSize = async (dir: string): Promise<number> => {
  try {
    return (await stat(join(dir, CATALOG_LOG_FILE))).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
};

/** Appends one line to the log (created when missing). Under the directory lock only. */
export const appendLogLine = async (dir: string, line: CatalogLogLine): Promise<void> => {
  const handle = await open(join(dir, CATALOG_LOG_FILE), 'a');
  try {
    await handle.write(encodeLogLine(line));
  } finally {
    await handle.close();
  }
};

/**
 * Replaces the log with an empty one (after a new base covers it), as a new file renamed into place: a reader that
 * remembers how far it read the old one sees another file (`logIdentity`) and starts over. Under the directory lock only.
 */
export const replaceLog = async (dir: string): Promise<void> => {
  const tmp = join(dir, `${CATALOG_LOG_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, Buffer.alloc(0));
    await rename(tmp, join(dir, CATALOG_LOG_FILE));
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
};

/** Removes both files (store repair rebuilds them). */
export const removeCatalogFiles = async (dir: string): Promise<void> => {
  await rm(join(dir, CATALOG_FILE), { force: true });
  await rm(join(dir, CATALOG_LOG_FILE), { force: true });
};
