import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { openSqliteEventStore } from '../../../../adapters/store/sqlite/index.js';

/**
 * Why the SQLite tests cannot run here, or null when they can: `better-sqlite3` missing, or installed without its
 * native addon (`npm ci --ignore-scripts`). The SQLite suites are then skipped under a title that says so.
 */
export const sqliteUnavailable: string | null = await (async () => {
  const dir = mkdtempSync(join(tmpdir(), 'steerlog-sqlite-probe-'));
  try {
    await (await openSqliteEventStore(join(dir, 'probe.db'))).close();
    return null;
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
})();

/** `describe` that runs only when SQLite can, and otherwise is skipped under a title naming the reason. */
export const describeSqlite = (name: string, fn: () => void): void => {
  if (sqliteUnavailable === null) describe(name, fn);
  else describe.skip(`${name} — skipped: ${sqliteUnavailable}`, fn);
};

/** A fresh database file per call, under one temporary directory removed after the file's tests. */
export const sqliteFiles = (): (() => string) => {
  const root = mkdtempSync(join(tmpdir(), 'steerlog-sqlite-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return () => join(root, `store-${n++}.db`);
};
