import type { LockFs } from './dir-lock.js';
import type { FsOps } from './fs-ops.js';

/**
 * - `fsync` (default): every append is its own commit: stream file written + fsynced, then its index records
 *   written + fsynced, before the promise resolves.
 * - `group`: appends that queue up while a commit is running share the next commit (same two fsyncs per touched
 *   file); each is still acknowledged only after its data is fsynced.
 * - `none`: no fsync at all (tests, throwaway data): a power loss can lose acknowledged events; a process crash cannot.
 */
export type JsonlDurability = 'fsync' | 'group' | 'none';

export interface JsonlEventStoreOptions {
  /** @defaultValue 'fsync' */
  readonly durability?: JsonlDurability;
  /** Largest serialized event accepted (EventTooLargeError above). @defaultValue 1 MiB */
  readonly maxEventBytes?: number;
  /** In `group` mode, the most append calls sharing one commit. @defaultValue 1024 */
  readonly maxGroupAppends?: number;
  /** How often live subscriptions look for appends made by other processes. @defaultValue 100 */
  readonly pollIntervalMs?: number;
  /** How long an append waits for another process's commit before failing with `store-io`. @defaultValue 30_000 */
  readonly lockTimeoutMs?: number;
  /** File-system calls (tests inject failures here). @defaultValue node:fs */
  readonly fs?: FsOps;
  /** The directory lock's synchronous file-system calls (tests inject failures here). @defaultValue node:fs */
  readonly lockFs?: LockFs;
}
