import { dbSystemOf, operationErrorOf, preciseNow, type StoreOperation } from '../../runtime/ports/store-operations.js';
import type { PartitionCommit, PartitionCommitEntry, PartitionsWrite, ProjectionLease, ProjectionStore } from './projection-store.js';

/**
 * A projection store that tells of each projection batch: every commit a worker makes through it (one partition's
 * batch of applied events, its checkpoint and documents in one transaction) is timed and reported as a
 * `projection-batch` {@link StoreOperation} — the projection's name as the collection, the events it applied, the
 * position it committed, its partition and version, the failure's code when it failed. The telemetry adapter turns
 * these into `db.*` spans, the host into metrics; the worker does not know it is observed.
 */

/** Options of {@link observeProjectionStore}. */
export interface ObserveProjectionStoreOptions {
  /** The clock of the timings (epoch ms, fractional). @defaultValue performance-based epoch ms */
  readonly now?: () => number;
  /** The `db.system.name` of the store. @defaultValue the store's `dbSystem`, else `other` */
  readonly system?: string;
}

/**
 * Wraps `store` so that each `commit` (and each partition of a `commitPartitions`) is reported to `listener` once it settled (a commit that throws is reported
 * with its error, then rethrown). Every other member is the store's own (bound to it). A listener that throws is
 * ignored: an observer never fails a commit.
 */
export const observeProjectionStore = <Tx>(
  store: ProjectionStore<Tx>,
  listener: (operation: StoreOperation) => void,
  options: ObserveProjectionStoreOptions = {},
): ProjectionStore<Tx> => {
  const now = options.now ?? preciseNow;
  const system = options.system ?? dbSystemOf(store);
  const tell = (lease: ProjectionLease, batch: Omit<PartitionCommit<Tx>, 'write'>, startTime: number, error?: unknown): void => {
    const operation: StoreOperation = {
      operation: 'projection-batch',
      system,
      collection: lease.key.name,
      startTime,
      endTime: now(),
      events: batch.applied,
      position: batch.position,
      partition: lease.key.partition,
      projectionVersion: lease.key.version,
      ...(error !== undefined ? { error: operationErrorOf(error) } : {}),
    };
    try {
      listener(operation);
    } catch {
      // an observer never fails a commit
    }
  };
  const commit: ProjectionStore<Tx>['commit'] = async (lease, c) => {
    const startTime = now();
    try {
      await store.commit(lease, c);
    } catch (e) {
      tell(lease, c, startTime, e);
      throw e;
    }
    tell(lease, c, startTime);
  };
  // a commit of several partitions in one transaction: one batch reported per partition, each with the whole timing
  const commitPartitions = async (entries: readonly PartitionCommitEntry[], write?: PartitionsWrite<Tx>): Promise<void> => {
    const startTime = now();
    try {
      await store.commitPartitions!(entries, write);
    } catch (e) {
      for (const entry of entries) tell(entry.lease, entry.commit, startTime, e);
      throw e;
    }
    for (const entry of entries) tell(entry.lease, entry.commit, startTime);
  };
  // every other member is the store's own, bound to it (methods a store adds beyond the interface included)
  return new Proxy(store, {
    get: (target, property) => {
      if (property === 'commit') return commit;
      if (property === 'commitPartitions') return store.commitPartitions ? commitPartitions : undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
};
