/**
 * What a store tells about its own work, for telemetry and metrics: appends (timed by the runtime around each
 * write-behind batch), fsync batches (a JSONL group commit: one fsync for every append it makes durable) and
 * projection batches (one commit of a projection worker). Plain values: the telemetry adapter turns them into
 * `db.*` spans and the host into metrics; nothing here knows OpenTelemetry.
 */

/** The kinds of store operation. */
export type StoreOperationName = 'append' | 'fsync' | 'projection-batch';

/** One store operation, timed. */
export interface StoreOperation {
  readonly operation: StoreOperationName;
  /**
   * The store's system, as the `db.system.name` attribute names it: `postgresql`, or steerlog's own
   * (`steerlog.jsonl`, `steerlog.memory`), else `other`.
   */
  readonly system: string;
  /** The stream written (a session's log), the projection applied, or '' for a batch over several streams. */
  readonly collection: string;
  /** Epoch milliseconds (fractional): when it began and ended. */
  readonly startTime: number;
  readonly endTime: number;
  /** Events it wrote, made durable or applied. */
  readonly events: number;
  /** A group commit: the appends it made durable together. */
  readonly appends?: number;
  /** An append: the revision (the session seq) of its first event. */
  readonly firstSeq?: number;
  /** A projection batch: the global position it committed, and the log's head position when it committed (its lag). */
  readonly position?: bigint;
  readonly headPosition?: bigint;
  /** A projection batch: the partition it committed, and the projection's version. */
  readonly partition?: number;
  readonly projectionVersion?: number;
  /** Why it failed (an error's stable `code`, else its name); absent when it succeeded. */
  readonly error?: string;
}

/** A store that tells of its operations (the JSONL store its group commits). */
export interface ObservableStore {
  /** Registers a listener of the store's operations; returns how to unregister it. */
  onOperation(listener: (operation: StoreOperation) => void): () => void;
}

/** The store's operations, if it tells of them. */
export const storeOperationsOf = (store: unknown): ObservableStore | null =>
  typeof store === 'object' && store !== null && typeof (store as { onOperation?: unknown }).onOperation === 'function' ? (store as ObservableStore) : null;

/** The `db.system.name` of a store: its `dbSystem`, else `other`. */
export const dbSystemOf = (store: unknown): string => {
  const named = typeof store === 'object' && store !== null ? (store as { dbSystem?: unknown }).dbSystem : undefined;
  return typeof named === 'string' && named !== '' ? named : 'other';
};

/** The failure of an operation as a short name: its stable `code`, else its class name. */
export const operationErrorOf = (e: unknown): string => {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && code !== '') return code;
  return e instanceof Error ? e.name : 'error';
};

/** Epoch milliseconds with sub-millisecond precision (for operation timings). */
export const preciseNow = (): number => performance.timeOrigin + performance.now();
