import { checkedForm } from '../../../runtime/ports/checked-events.js';
import { optionalEventFields } from '../../../runtime/ports/recorded-envelope.js';
import {
  globalPosition,
  streamRevision,
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
} from '../../../runtime/ports/event-store.js';
import { isStoreError, StoreIoError, StreamDeletedError, UnknownOutcomeError } from '../../../runtime/ports/store-errors.js';
import { concurrencyError, expectedRevisionMatches, idempotencyVerdict } from '../../../runtime/ports/store-validation.js';
import type { ChangeNotifier } from '../shared/change-notifier.js';
import type { LockLease } from './lock-lease.js';
import { encodeEventLine, type StoredEvent } from './line-codec.js';
import type { StoreDirectory } from './store-directory.js';
import type { StreamCache, StreamState } from './stream-cache.js';
import { UncertainCommitError, writeDrafts, type Draft } from './write-drafts.js';
import { recoverIndex, storedRevisions, writerState } from './writer-state.js';
import { stepChange, type CatalogChange } from './catalog-fold.js';
import type { JsonlSessionCatalog } from './session-catalog.js';
import { WorkSlices } from '../shared/work-slices.js';

/** One append call waiting in the commit queue. */
export interface PendingAppend {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  readonly resolve: (r: AppendResult) => void;
  readonly reject: (e: unknown) => void;
}

/** What a commit works with: the open directory, the stream cache, the cross-process lock, and who to tell. */
export interface CommitContext {
  readonly directory: StoreDirectory;
  readonly cache: StreamCache;
  readonly lock: LockLease;
  readonly notifier: ChangeNotifier;
  /** The session catalog, told of each commit under the lock (session-catalog.ts). */
  readonly catalog?: JsonlSessionCatalog;
  /**
   * How long the commit's own work runs before it lets the event loop run (`WorkSlices`): drafting the group's lines
   * (between two events, of one append or of two), encoding its index records and its journal record.
   * @defaultValue Infinity (no slicing)
   */
  readonly sliceMs?: number;
}

/**
 * Commits one group of appends under the directory lock: checks each against its stream (idempotency, expected
 * revision), drafts the new lines, writes them all, then settles every append (it never rejects).
 */
export const commitAppends = async (
  { directory, cache, lock, notifier, catalog, sliceMs = Infinity }: CommitContext,
  items: PendingAppend[],
  /** Are more appends queued behind this group? Then the lock may stay held for the next commit. */
  more: () => boolean = () => false,
): Promise<void> => {
  const results = new Map<PendingAppend, AppendResult>();
  const errors = new Map<PendingAppend, unknown>();
  const drafts = new Map<string, Draft>();
  const changes = new Map<string, CatalogChange>();
  let last: { hash: string; lineCrc: number } | undefined;
  let failure: unknown;
  try {
    await lock.acquire();
  } catch (e) {
    for (const item of items) item.reject(e);
    return;
  }
  try {
    const index = await recoverIndex(directory);
    await directory.refreshDeletions();
    let nextPos = index.view.count;
    const refreshed = new Map<string, StreamState>();
    // a group of many appends (every session's write-behind at once), or one large append, drafts thousands of lines: in slices
    const slices = new WorkSlices(sliceMs);
    for (const item of items) {
      if (slices.due) await slices.pause();
      try {
        if (directory.isDeleted(directory.names(item.stream).hash)) throw new StreamDeletedError(item.stream);
        let state = refreshed.get(item.stream);
        if (!state) {
          state = await writerState(directory, cache, item.stream, index);
          refreshed.set(item.stream, state);
        }
        let draft = drafts.get(item.stream);
        const lastRevision = draft?.lastRevision ?? state.lastRevision;
        // the batch's ids the stream's committed part holds (read back from the file: the state keeps hashes)
        const stored = await storedRevisions(directory, state, index, item.events.map((e) => e.id));
        const revisionOfId = (id: string): bigint | undefined => {
          const r = draft?.newIds.get(id) ?? stored.get(id);
          return r === undefined ? undefined : BigInt(r);
        };
        const positionOf = (rev: number): number => (rev < state.positions.length ? state.positions[rev]! : draft!.newPositions[rev - state.positions.length]!);
        const verdict = idempotencyVerdict(item.stream, item.events, revisionOfId);
        if (verdict.kind === 'already-appended') {
          const rev = Number(verdict.lastRevision);
          results.set(item, { nextExpectedRevision: streamRevision(rev), position: globalPosition(positionOf(rev)) });
          continue;
        }
        const actual = lastRevision < 0 ? 'no_stream' : streamRevision(lastRevision);
        if (!expectedRevisionMatches(item.expected, actual)) throw concurrencyError(item.stream, item.expected, actual);
        if (item.events.length === 0) {
          results.set(item, {
            nextExpectedRevision: streamRevision(lastRevision),
            position: globalPosition(lastRevision < 0 ? -1 : positionOf(lastRevision)),
          });
          continue;
        }
        if (!draft) {
          draft = { state, lines: [], newIds: new Map(), newPositions: [], lastRevision: state.lastRevision, bytes: 0 };
          drafts.set(item.stream, draft);
        }
        for (let i = 0; i < item.events.length; i++) {
          // one large append (a turn's batch, a fork's seed) drafts many lines too: in slices as well, between two
          // events (the check above covers the first)
          if (i > 0 && slices.due) await slices.pause();
          const e = item.events[i]!;
          const rev = ++draft.lastRevision;
          const pos = nextPos++;
          const stored: StoredEvent = {
            rev,
            pos,
            id: e.id,
            type: e.type,
            time: e.time,
            data: e.data,
            ...optionalEventFields(e),
            g: index.view.count, // the commit's first position: see StoredEvent.g
          };
          const line = encodeEventLine(stored, checkedForm(e)?.dataJson);
          draft.lines.push(line.bytes);
          changes.set(item.stream, stepChange(changes.get(item.stream), item.stream, state.hash, stored));
          last = { hash: state.hash, lineCrc: line.crc };
          draft.newIds.set(e.id, rev);
          draft.newPositions.push(pos);
        }
        results.set(item, { nextExpectedRevision: streamRevision(draft.lastRevision), position: globalPosition(nextPos - 1) });
      } catch (e) {
        errors.set(item, e);
      }
    }
    if (drafts.size > 0) {
      await writeDrafts(directory, cache, [...drafts.values()], index.view.count, sliceMs);
      // committed: the catalog's log line, under the lock (a failure there is the catalog's own, never the commit's)
      if (catalog && last) await catalog.noteCommit(index.view.count, nextPos, [last.hash, last.lineCrc], [...changes.values()].filter((c) => drafts.has(c.stream)));
    }
  } catch (e) {
    failure = isStoreError(e) ? e : new StoreIoError('append', { cause: e });
    for (const d of drafts.values()) cache.states.delete(d.state.stream); // reload from disk next time
  } finally {
    try {
      lock.release(failure === undefined && more());
    } catch {
      // a full disk refused the lock's "released" line after the commit: this process still treats the lock as free
      // (dir-lock.ts); what was committed stays committed and is acknowledged
    }
    await directory.trimWriteHandles();
  }
  for (const item of items) {
    const error =
      errors.get(item) ??
      (failure !== undefined && results.has(item)
        ? failure instanceof UncertainCommitError
          ? new UnknownOutcomeError(item.stream, item.events.length, 'a JSONL write failed and its rollback failed too', { cause: failure })
          : failure
        : undefined);
    if (error !== undefined) item.reject(error);
    else item.resolve(results.get(item)!);
  }
  if (drafts.size > 0 && failure === undefined) notifier.notify();
};
