/** The PostgreSQL store's StreamDeletion: one call of the schema's `delete_stream()` function. */
import type { StreamRevision } from '../../../runtime/ports/event-store.js';
import { StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import type { DeleteStreamOptions } from '../../../runtime/ports/stream-deletion.js';
import { assertValidStreamId, concurrencyError } from '../../../runtime/ports/store-validation.js';
import { STREAM_DELETED, WRONG_EXPECTED_REVISION, actualRevision } from './statements.js';
import { assertOpen, storeFailure, type StoreContext } from './store-context.js';

/**
 * Deletes a whole stream if its last revision is `expected`, through `delete_stream()`: one transaction that records
 * it in `archived_streams` (with `reason`) and deletes its events — the only DELETE the append-only trigger lets
 * through. See docs/store-postgres.md.
 * @throws ConcurrencyError when its last revision is not `expected`; StreamDeletedError when it was already deleted
 */
export async function deleteStoredStream(ctx: StoreContext, stream: string, expected: StreamRevision, options: DeleteStreamOptions): Promise<void> {
  assertOpen(ctx);
  assertValidStreamId(stream);
  try {
    await ctx.pool.query(ctx.sql.deleteStream, [stream, String(expected), options.reason ?? null]);
  } catch (e) {
    const pgErr = e as { code?: string; detail?: string };
    if (pgErr.code === WRONG_EXPECTED_REVISION) {
      throw concurrencyError(stream, expected, actualRevision(pgErr.detail ?? '-1'));
    }
    if (pgErr.code === STREAM_DELETED) throw new StreamDeletedError(stream, { cause: e });
    throw storeFailure(ctx, e);
  }
}
