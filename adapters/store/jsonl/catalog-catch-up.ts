import { join } from 'node:path';
import { StoreCorruptError } from '../../../runtime/ports/store-errors.js';
import { applyChange, breakRow, stepChange, type CatalogRow } from './catalog-fold.js';
import type { CatalogKey } from './catalog-files.js';
import { hashOfFileName, streamFileName } from './file-name.js';
import { isErrnoCode, type FileOps } from './fs-ops.js';
import { readExactly } from './global-index.js';
import { decodeIndexRecord, decodeLine, decodeLineAt, INDEX_RECORD_BYTES, type IndexRecord } from './line-codec.js';
import type { StoreDirectory } from './store-directory.js';

/** Index records read at a time. */
const CHUNK = 4096;
/** Stream files read at once. */
const PARALLEL = 16;
/** The most bytes a header line can take (an id is at most 200 UTF-8 bytes). */
const HEADER_BYTES = 2048;

/** The catalog's rows, by stream id and by stream file hash (what the fold reads and writes of them). */
export interface CatalogRows {
  readonly rows: { get(stream: string): CatalogRow | undefined; set(stream: string, row: CatalogRow): unknown };
  readonly byHash: { get(hash: string): string | undefined; set(hash: string, stream: string): unknown };
}

/** Catalog rows held in two maps (a fold from nothing: `store check`, `store repair`). */
export interface MapCatalogRows extends CatalogRows {
  readonly rows: Map<string, CatalogRow>;
  readonly byHash: Map<string, string>;
}

/** Empty {@link MapCatalogRows}. */
export const mapCatalogRows = (): MapCatalogRows => ({ rows: new Map(), byHash: new Map() });

/**
 * Folds the committed events at global positions [from, to) into `rows`, reading the index records and, per
 * stream file, the lines they point at (one read per file per 4096 records). A line that does not check out
 * (checksum, JSON, position, the index record's checksum) or a file that is missing or short marks its stream
 * `broken` and the fold goes on: a damaged stream never keeps the other rows from being listed. Records of deleted
 * streams are skipped. A damaged index record is refused (StoreCorruptError): which stream it belongs to is unknown.
 * Returns the key of the record at `to - 1`.
 */
export const foldIndexRange = async (directory: StoreDirectory, into: CatalogRows, from: number, to: number): Promise<CatalogKey> => {
  let key: CatalogKey = null;
  let files: Map<string, string> | undefined;
  const fileNameOf = async (hash: string): Promise<string | undefined> => {
    const stream = into.byHash.get(hash);
    if (stream !== undefined) return directory.names(stream).fileName;
    files ??= new Map((await directory.fs.readdir(directory.streamsDir)).flatMap((n) => { const h = hashOfFileName(n); return h === undefined ? [] : [[h, n] as const]; }));
    return files.get(hash);
  };
  for (let start = from; start < to; start += CHUNK) {
    const n = Math.min(CHUNK, to - start);
    const bytes = await readExactly(directory.indexRead, start * INDEX_RECORD_BYTES, n * INDEX_RECORD_BYTES, directory.indexPath);
    const byFile = new Map<string, { pos: number; record: IndexRecord }[]>();
    for (let i = 0; i < n; i++) {
      const record = decodeIndexRecord(bytes, i * INDEX_RECORD_BYTES);
      if (typeof record === 'string') throw new StoreCorruptError(directory.indexPath, (start + i) * INDEX_RECORD_BYTES, `${record} (global position ${start + i}, inside the committed index)`, start + i + 1);
      if (i === n - 1 && start + n === to) key = [record.fileHash, record.lineCrc];
      if (directory.isDeleted(record.fileHash)) continue;
      let list = byFile.get(record.fileHash);
      if (!list) byFile.set(record.fileHash, (list = []));
      list.push({ pos: start + i, record });
    }
    const work = [...byFile.entries()];
    for (let i = 0; i < work.length; i += PARALLEL) {
      await Promise.all(work.slice(i, i + PARALLEL).map(async ([hash, records]) => foldFileRecords(directory, into, hash, await fileNameOf(hash), records)));
    }
  }
  return key;
};

const foldFileRecords = async (directory: StoreDirectory, into: CatalogRows, hash: string, fileName: string | undefined, records: readonly { pos: number; record: IndexRecord }[]): Promise<void> => {
  const path = fileName === undefined ? undefined : join(directory.streamsDir, fileName);
  let file: FileOps | undefined;
  try {
    if (path !== undefined) file = await directory.fs.open(path, 'read');
  } catch (e) {
    if (!isErrnoCode(e, 'ENOENT')) throw e;
  }
  try {
    let stream = into.byHash.get(hash);
    if (stream === undefined && file !== undefined) stream = await headerStream(file, hash);
    if (stream === undefined) return; // no file, or no readable header: nothing names the stream
    into.byHash.set(hash, stream);
    const broken = (reason: string): void => {
      into.rows.set(stream!, breakRow(into.rows.get(stream!), stream!, hash, reason));
    };
    if (file === undefined) return broken(`${fileName ?? hash}: the stream file is missing, but the index holds its events`);
    const first = records[0]!.record.offset;
    const last = records.at(-1)!.record;
    let bytes: Buffer;
    try {
      bytes = await readExactly(file, first, last.offset + last.length - first, path!);
    } catch (e) {
      if (e instanceof StoreCorruptError) return broken(`${fileName}: the file ends before the line at byte ${last.offset} its index record names`);
      throw e;
    }
    for (const { pos, record } of records) {
      const at = record.offset - first;
      const line = decodeLineAt(bytes, at, at + record.length);
      const reason =
        typeof line === 'string' ? line : line.kind !== 'event' ? 'a header where an event was indexed' : line.crc !== record.lineCrc ? 'the line is not the one its index record names (checksum)' : line.event.pos !== pos ? `the line holds position ${line.event.pos}` : undefined;
      if (reason !== undefined || typeof line === 'string' || line.kind !== 'event') {
        broken(`${fileName} byte ${record.offset}: ${reason} (global position ${pos})`);
        continue;
      }
      into.rows.set(stream, applyChange(into.rows.get(stream), stepChange(undefined, stream, hash, line.event)));
    }
  } finally {
    await file?.close().catch(() => undefined);
  }
};

/** The stream id in a file's header line, when it decodes and its hash is the file's. */
const headerStream = async (file: FileOps, hash: string): Promise<string | undefined> => {
  const buffer = Buffer.alloc(HEADER_BYTES);
  const got = await file.read(buffer, 0, HEADER_BYTES, 0);
  const nl = buffer.subarray(0, got).indexOf(0x0a);
  if (nl < 0) return undefined;
  const line = decodeLine(buffer.subarray(0, nl));
  if (typeof line === 'string' || line.kind !== 'header' || streamFileName(line.stream).hash !== hash) return undefined;
  return line.stream;
};
