/** The SQLite store's StreamDeletion: one transaction that records the deletion and deletes the stream's rows. */
import type { StreamRevision } from '../../../runtime/ports/event-store.js';
import { streamRevision } from '../../../runtime/ports/event-store.js';
import { StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import type { DeleteStreamOptions } from '../../../runtime/ports/stream-deletion.js';
import { assertValidStreamId, concurrencyError } from '../../../runtime/ports/store-validation.js';
import { onOpenStore, type SqliteContext } from './store-context.js';

/**
 * Deletes a whole stream if its last revision is `expected`: records it in `archived_streams` (with `reason`; the
 * id is retired) and deletes its events, its stream, catalog and snapshot rows, in one immediate transaction. The
 * other events keep their positions (the global counter never goes back).
 * @throws ConcurrencyError when its last revision is not `expected`; StreamDeletedError when it was already deleted
 */
export const deleteStoredStream = (ctx: SqliteContext, stream: string, expected: StreamRevision, options: DeleteStreamOptions): void => {
  assertValidStreamId(stream);
  onOpenStore(ctx, () =>
    ctx.db
      .transaction(() => {
        if (ctx.stmt('SELECT 1 FROM archived_streams WHERE stream = ?').get(stream) !== undefined) throw new StreamDeletedError(stream);
        const row = ctx.stmt('SELECT revision FROM streams WHERE stream = ?').get(stream) as { revision: number } | undefined;
        if (row === undefined || BigInt(row.revision) !== expected) {
          throw concurrencyError(stream, expected, row === undefined ? 'no_stream' : streamRevision(row.revision));
        }
        ctx.stmt('INSERT INTO archived_streams (stream, revision, reason, archived_at) VALUES (?, ?, ?, ?)').run(stream, row.revision, options.reason ?? null, Date.now());
        for (const table of ['events', 'streams', 'session_catalog', 'fold_snapshots']) ctx.stmt(`DELETE FROM ${table} WHERE stream = ?`).run(stream);
      })
      .immediate(),
  );
  ctx.notifier.notify();
};
