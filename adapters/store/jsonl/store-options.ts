import type { LockFs } from './dir-lock.js';
import type { FsOps } from './fs-ops.js';

/**
 * - `group` (default): appends that queue up while a commit is running share the next commit; each is acknowledged
 *   only after its data is fsynced. A commit costs one fsync: its stream lines and index records are copied into the
 *   group journal and the journal is fsynced (the stream files and the index are flushed at the journal's next
 *   checkpoint; after a power loss, opening the store writes the journal back).
 * - `fsync`: the same commit, one append call at a time (no sharing): one fsync per append.
 * - `none`: no fsync at all (tests, throwaway data): a power loss can lose acknowledged events; a process crash cannot.
 * In both durable modes a commit that creates a stream file also fsyncs the new file and the streams directory,
 * and a commit larger than 4 MiB fsyncs its stream files and the index instead of journaling them.
 */
export type JsonlDurability = 'fsync' | 'group' | 'none';

/** Options of the JSONL store: durability, the largest event, group-commit size, polling and lock timeouts, the file system. */
export interface JsonlEventStoreOptions {
  /** @defaultValue 'group' */
  readonly durability?: JsonlDurability;
  /** Largest serialized event accepted (EventTooLargeError above). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** In `group` mode, the most append calls sharing one commit. @defaultValue 1024 */
  readonly maxGroupAppends?: number;
  /** How often live subscriptions look for appends made by other processes. @defaultValue 100 */
  readonly pollIntervalMs?: number;
  /** How long an append waits for another process's commit before failing with `store-io`. @defaultValue 30_000 */
  readonly lockTimeoutMs?: number;
  /**
   * Open for reading only: nothing is created, locked, repaired or written (appends reject with `store-io`).
   * The directory must hold a store; opening checks it against its index like a writable open does, but
   * refuses (`store-corrupt`) what a writable open would cut. @defaultValue false
   */
  readonly readOnly?: boolean;
  /** File-system calls (tests inject failures here). @defaultValue node:fs */
  readonly fs?: FsOps;
  /** The directory lock's synchronous file-system calls (tests inject failures here). @defaultValue node:fs */
  readonly lockFs?: LockFs;
  /**
   * The session catalog's log (`sessions.catalog.log`, one line per commit) is folded into a new base once it is
   * this large (docs/store-jsonl.md, "The session catalog"). When not given, at 1 MiB or once the log is as large as
   * the base and at least 16 KiB, whichever comes first. @defaultValue 1 MiB (16 KiB–1 MiB by the base's size)
   */
  readonly catalogLogBytes?: number;
  /**
   * How long a commit's own synchronous work may run before it lets the event loop run (ms): a group commit of
   * many appends, or of one large append, drafts its lines and encodes its index and journal records in slices this
   * long (between two events, 256 index records, two stream files of the record or 96 KiB of one), and a write of
   * fold snapshots encodes them so (between two snapshots), so the process's timers and I/O (a host's requests) wait
   * at most about this long for it. 0 pauses between every two; `Infinity` never. @defaultValue 2
   */
  readonly commitSliceMs?: number;
}

/** The default of {@link JsonlEventStoreOptions.commitSliceMs}, ms. */
export const DEFAULT_COMMIT_SLICE_MS = 2;
