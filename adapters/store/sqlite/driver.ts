/**
 * The SQLite store's driver, `better-sqlite3`: an optional peer dependency, loaded only when a SQLite store is opened.
 * Only the part of its API this adapter uses is typed here (no `@types` package needed).
 */
import { createRequire } from 'node:module';
import { StoreError } from '../../../runtime/ports/store-errors.js';

/** A prepared statement (better-sqlite3's `Statement`), as this adapter uses it. */
export interface SqliteStatement {
  run(...params: unknown[]): { readonly changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** A connection (better-sqlite3's `Database`), as this adapter uses it. */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(sql: string, options?: { readonly simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): { immediate(...args: A): R };
  close(): unknown;
}

type DatabaseConstructor = new (file: string, options?: { readonly readonly?: boolean; readonly fileMustExist?: boolean; readonly timeout?: number }) => SqliteDatabase;

/** The npm package the `sqlite:` store needs. */
export const SQLITE_DRIVER_PACKAGE = 'better-sqlite3';

/**
 * `better-sqlite3` is installed but its native addon is not (installed with `--ignore-scripts`, or built for another
 * Node version): the message says how to build it.
 */
export class SqliteDriverUnbuiltError extends StoreError {
  declare readonly code: 'store-io';
  /** Why the addon would not load, for tests and logs. */
  readonly reason = 'sqlite-addon-unbuilt' as const;
  constructor(options?: { readonly cause?: unknown }) {
    super('store-io', `the sqlite: store's driver "${SQLITE_DRIVER_PACKAGE}" is installed but its native addon does not load (not built: installed with --ignore-scripts?, or built for another Node): npm rebuild ${SQLITE_DRIVER_PACKAGE}`, options);
    this.name = 'SqliteDriverUnbuiltError';
  }
}
/** Is this a {@link SqliteDriverUnbuiltError}? */
export const isSqliteDriverUnbuiltError = (e: unknown): e is SqliteDriverUnbuiltError =>
  e instanceof Error && (e as { reason?: unknown }).reason === 'sqlite-addon-unbuilt';

const ADDON_MISSING = /bindings file|better_sqlite3\.node|NODE_MODULE_VERSION|invalid ELF|was compiled against/i;

/**
 * Opens a connection to `file` with `better-sqlite3` (required on first use).
 * @throws SqliteDriverUnbuiltError when the package is there but its native addon is not built
 * @throws StoreError `store-io` naming the package when it is not installed
 */
export const connectSqlite = (file: string, options: { readonly readOnly: boolean; readonly busyTimeoutMs: number }): SqliteDatabase => {
  let Database: DatabaseConstructor;
  try {
    Database = createRequire(import.meta.url)(SQLITE_DRIVER_PACKAGE) as DatabaseConstructor;
  } catch (e) {
    // `openStore` names the missing package first (StoreDriverMissingError); this is for a direct caller
    if ((e as { code?: unknown }).code === 'MODULE_NOT_FOUND') throw new StoreError('store-io', `the SQLite store needs the package "${SQLITE_DRIVER_PACKAGE}", which is not installed: npm install ${SQLITE_DRIVER_PACKAGE}`, { cause: e });
    throw e;
  }
  try {
    return new Database(file, { readonly: options.readOnly, fileMustExist: options.readOnly, timeout: options.busyTimeoutMs });
  } catch (e) {
    if (e instanceof Error && ADDON_MISSING.test(e.message)) throw new SqliteDriverUnbuiltError({ cause: e });
    throw e;
  }
};
