import { isDeepStrictEqual } from 'node:util';
import { foldIndexRange, mapCatalogRows } from './catalog-catch-up.js';
import { CATALOG_FILE, removeCatalogFiles, writeBase } from './catalog-files.js';
import { nodeFsOps, type FsOps } from './fs-ops.js';
import { viewIndex } from './global-index.js';
import { StoreDirectory } from './store-directory.js';
import { JsonlSessionCatalog } from './session-catalog.js';
import { INDEX_FILE } from './global-index.js';
import { join } from 'node:path';

/** A disagreement `checkJsonlCatalog` found between the catalog's files and a fold of the log. */
export interface CatalogFinding {
  readonly file: string;
  readonly offset: number;
  readonly message: string;
}

/** A read-only view of the store's directory (the index open for reading), for folding the catalog outside a store instance. */
const readingDirectory = async (dir: string, fs: FsOps): Promise<StoreDirectory> => {
  const index = await fs.open(join(dir, INDEX_FILE), 'read');
  return new StoreDirectory(dir, fs, { indexWrite: index, indexRead: index, journal: index }, 'none');
};

/**
 * Compares the session catalog as its files give it (base, log, and the index records they do not cover) with a
 * fold of the whole committed log, row by row. Rows the fold finds broken are left out: the damage under them is
 * the store check's own finding. Writes nothing. A damaged index is not compared (the store check reports it).
 */
export const checkJsonlCatalog = async (dir: string, fs: FsOps = nodeFsOps): Promise<CatalogFinding[]> => {
  const directory = await readingDirectory(dir, fs);
  try {
    await directory.refreshDeletions();
    const stored = await new JsonlSessionCatalog(directory, false).rows();
    const fold = mapCatalogRows();
    await foldIndexRange(directory, fold, 0, (await viewIndex(directory.indexRead, directory.indexPath)).count);
    const findings: CatalogFinding[] = [];
    const storedById = new Map(stored.map((r) => [r.row.sessionId, r.row]));
    for (const [id, r] of fold.rows) {
      if (directory.isDeleted(r.hash) || r.row.status === 'broken') continue;
      const s = storedById.get(id);
      if (!isDeepStrictEqual(s, r.row)) {
        findings.push({ file: CATALOG_FILE, offset: 0, message: `the session catalog's row of ${JSON.stringify(id)} is ${JSON.stringify(s ?? null)}, the log says ${JSON.stringify(r.row)} (store repair rebuilds the catalog)` });
      }
    }
    for (const id of storedById.keys()) {
      if (!fold.rows.has(id)) findings.push({ file: CATALOG_FILE, offset: 0, message: `the session catalog lists ${JSON.stringify(id)}, which the log does not hold (store repair rebuilds the catalog)` });
    }
    return findings;
  } finally {
    await directory.closeFiles();
  }
};

/** What `rebuildJsonlCatalog` wrote. */
export interface CatalogRebuildReport {
  /** Rows in the new base (deleted streams left out). */
  readonly rows: number;
  /** Committed events folded. */
  readonly events: number;
}

/**
 * Rebuilds the session catalog from the log: removes its files and writes a new base folded from every committed
 * index record (`store repair` runs it after recovery and after an index rebuild).
 */
export const rebuildJsonlCatalog = async (dir: string, fs: FsOps = nodeFsOps): Promise<CatalogRebuildReport> => {
  await removeCatalogFiles(dir);
  const directory = await readingDirectory(dir, fs);
  try {
    await directory.refreshDeletions();
    const fold = mapCatalogRows();
    const { count } = await viewIndex(directory.indexRead, directory.indexPath);
    const key = await foldIndexRange(directory, fold, 0, count);
    const rows = [...fold.rows.values()].filter((r) => !directory.isDeleted(r.hash));
    await writeBase(dir, { upTo: count, key, rows });
    return { rows: rows.length, events: count };
  } finally {
    await directory.closeFiles();
  }
};
