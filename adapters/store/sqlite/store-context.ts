/** What the parts of a SQLite store (appends, reads, catalog, snapshots) share, and the checks they all make. */
import { StoreClosedError, StoreError, isStoreError } from '../../../runtime/ports/store-errors.js';
import type { ChangeNotifier } from '../shared/change-notifier.js';
import type { SqliteDatabase, SqliteStatement } from './driver.js';

/** The store's connection, its prepared statements, and whether its `close()` has begun. */
export interface SqliteContext {
  /** The store's one connection (better-sqlite3 is synchronous: every call runs to its end before the next). */
  readonly db: SqliteDatabase;
  /** A statement prepared once per connection and kept. */
  readonly stmt: (sql: string) => SqliteStatement;
  /** Opened read-only. */
  readonly readOnly: boolean;
  /** Rows per page when a reader names no page size. */
  readonly pageSize: number;
  /** The largest event accepted. */
  readonly maxEventBytes: number;
  /** Told after every append or deletion that changed the store, to wake this process's subscriptions. */
  readonly notifier: ChangeNotifier;
  /** True from the moment `close()` is called. */
  readonly isClosed: () => boolean;
}

/** Prepares each statement once and keeps it. */
export const statementCache = (db: SqliteDatabase): ((sql: string) => SqliteStatement) => {
  const cache = new Map<string, SqliteStatement>();
  return (sql) => {
    let s = cache.get(sql);
    if (s === undefined) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  };
};

/** @throws StoreClosedError once the store's `close()` has begun */
export const assertOpen = (ctx: SqliteContext): void => {
  if (ctx.isClosed()) throw new StoreClosedError();
};

/** A failed database call: a StoreError as it is; StoreClosedError when closing; anything else as `store-io`. */
export const storeFailure = (ctx: SqliteContext, e: unknown): unknown => {
  if (isStoreError(e)) return e;
  if (ctx.isClosed()) return new StoreClosedError();
  return new StoreError('store-io', `SQLite: ${(e as Error)?.message ?? String(e)}`, { cause: e });
};

/** Runs `fn` on the open store; database failures are reported as {@link storeFailure} says. */
export const onOpenStore = <T>(ctx: SqliteContext, fn: () => T): T => {
  assertOpen(ctx);
  try {
    return fn();
  } catch (e) {
    throw storeFailure(ctx, e);
  }
};
