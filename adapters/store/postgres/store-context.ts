/**
 * What the parts of a PostgreSQL store (appends, reads, deletion, subscriptions) share, and the two checks they all
 * make: that the store is open, and what a failure of the database is reported as.
 */
import type { Pool } from 'pg';
import { StoreClosedError, StoreError, isStoreError } from '../../../runtime/ports/store-errors.js';
import type { Statements } from './statements.js';

/** The pool a store queries, its schema's statements, and whether its `close()` has begun. */
export interface StoreContext {
  /** Where every statement but LISTEN runs (the caller's pool, or the one the store created). */
  readonly pool: Pool;
  /** The statements of the store's schema. */
  readonly sql: Statements;
  /** True from the moment `close()` is called. */
  readonly isClosed: () => boolean;
}

/**
 * The check every operation makes first.
 * @throws StoreClosedError once the store's `close()` has begun
 */
export const assertOpen = (ctx: StoreContext): void => {
  if (ctx.isClosed()) throw new StoreClosedError();
};

/**
 * What a failed database call is reported as: a StoreError as it is; StoreClosedError when the store is closing
 * (its pool may be ending under the call); anything else as `store-io`, with `e` as the cause.
 */
export const storeFailure = (ctx: StoreContext, e: unknown): unknown => {
  if (isStoreError(e)) return e;
  if (ctx.isClosed()) return new StoreClosedError();
  return new StoreError('store-io', `PostgreSQL: ${(e as Error)?.message ?? String(e)}`, { cause: e });
};
