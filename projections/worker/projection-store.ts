/** One partition of one projection version: what a lease and a checkpoint are kept for. */
export interface PartitionKey {
  readonly name: string;
  readonly version: number;
  /** 0 … partitions − 1. */
  readonly partition: number;
  /** How many partitions the version's streams are spread over (fixed for a version). */
  readonly partitions: number;
}

/** A worker's hold on a partition: valid until another worker takes the partition with a higher epoch. */
export interface ProjectionLease {
  readonly key: PartitionKey;
  /** The worker's id. */
  readonly owner: string;
  /** Grows by one at every change of owner (and at every new take after a release): the fence of every commit. */
  readonly epoch: number;
}

/** What a partition's checkpoint holds when a worker takes it. */
export interface PartitionSnapshot {
  /** The last position committed (global position; null: nothing yet). */
  readonly position: bigint | null;
  /** The keyed documents of the partition (JSON text by key); a single-state projection has one, under `''`. */
  readonly documents: ReadonlyMap<string, string>;
}

/** An event a projection could not apply and set aside under the `park` policy (never skipped silently). */
export interface ParkedEvent {
  readonly position: bigint;
  readonly stream: string;
  readonly revision: bigint;
  /** The error's one-line message. */
  readonly error: string;
}

/** A parked event as the store keeps it: with its partition and when it was parked. */
export interface ParkedRecord extends ParkedEvent {
  readonly partition: number;
  readonly parkedAt: Date;
}

/**
 * Runs `work` inside the commit's transaction so that if it throws, only its own writes are undone (PostgreSQL: a
 * savepoint); resolves to the error it threw, or null.
 */
export type Isolate = (work: () => Promise<void>) => Promise<unknown>;

/** One commit of a partition: everything in it becomes visible together with the new checkpoint, or nothing does. */
export interface PartitionCommit<Tx> {
  /** The new checkpoint (global position); never below the stored one. */
  readonly position: bigint;
  /** Changed keyed documents (JSON text), null to delete one. */
  readonly documents: ReadonlyMap<string, string | null>;
  /** Events to park. */
  readonly parked: readonly ParkedEvent[];
  /** Parked events (by position) that were applied now and leave the dead-letter list. */
  readonly unparked?: readonly bigint[];
  /** How many events the commit applied (kept as a running count, for status). */
  readonly applied: number;
  /**
   * The table projection's writes, inside the commit's transaction (before the checkpoint is written); it may
   * return more events to park (found inside the transaction), kept in the same transaction.
   */
  readonly write?: (tx: Tx, isolate: Isolate) => Promise<readonly ParkedEvent[] | void>;
}

/** One partition's share of a commit of several partitions (see `ProjectionStore.commitPartitions`). */
export interface PartitionCommitEntry {
  readonly lease: ProjectionLease;
  /** The partition's checkpoint, documents, parked events and count (its `write` is not used: see `commitPartitions`). */
  readonly commit: Omit<PartitionCommit<never>, 'write'>;
}

/**
 * The writes of a table projection for the events of several partitions, inside one commit's transaction; the events
 * it parks go to the partition of their stream.
 */
export type PartitionsWrite<Tx> = (tx: Tx, isolate: Isolate) => Promise<readonly ParkedEvent[] | void>;

/** One partition as `status` reports it. */
export interface PartitionStatus {
  readonly key: PartitionKey;
  /** The lease's holder when the lease is live, else null. */
  readonly owner: string | null;
  readonly epoch: number;
  readonly leaseExpiresAt: Date | null;
  /** The committed checkpoint (null: none yet). */
  readonly position: bigint | null;
  /** When the checkpoint was last committed. */
  readonly committedAt: Date | null;
  /** Events applied so far (running count of the commits). */
  readonly applied: bigint;
  /** Events parked and not yet replayed. */
  readonly parked: number;
}

/**
 * Where projection workers keep leases, checkpoints, keyed documents and parked events
 * (implementations: file, for the JSONL store; PostgreSQL). Every commit is fenced: it lands only when the
 * partition's lease still has the committing epoch and the position does not move backwards; otherwise it throws
 * `ProjectionFencedError` and nothing of it is kept.
 */
export interface ProjectionStore<Tx = never> {
  /** Which projection kinds it can hold: a store without transactions refuses table projections. */
  readonly supportsTables: boolean;
  /**
   * Takes the partition's lease for `leaseMs` when it is free, expired, or already `owner`'s; a take by a new owner
   * (or after a release) increments the epoch. Null when another owner holds a live lease.
   * @throws ProjectionPartitionsMismatchError when the version's partitions were created with another count
   */
  acquire(key: PartitionKey, owner: string, leaseMs: number): Promise<ProjectionLease | null>;
  /** Extends the lease; false when it was lost (another epoch holds it). */
  renew(lease: ProjectionLease, leaseMs: number): Promise<boolean>;
  /** Gives the lease up (the epoch stays; the next take increments it). */
  release(lease: ProjectionLease): Promise<void>;
  /** The checkpoint and keyed documents of a partition (read after `acquire`). */
  load(lease: ProjectionLease): Promise<PartitionSnapshot>;
  /** Commits atomically and fenced (see the interface). @throws ProjectionFencedError */
  commit(lease: ProjectionLease, commit: PartitionCommit<Tx>): Promise<void>;
  /**
   * Commits several partitions of one projection version (held by one worker) in one transaction: each one fenced as
   * `commit` fences it, with `write` (a table projection's writes for the events of all of them) run once inside it.
   * All of it lands, or nothing does: one partition fenced refuses the whole commit (`ProjectionFencedError` of that
   * partition). Optional: a worker holding several partitions commits them one transaction each without it; with it,
   * a batch costs one transaction however many partitions the worker holds.
   * @throws ProjectionFencedError
   */
  commitPartitions?(entries: readonly PartitionCommitEntry[], write?: PartitionsWrite<Tx>): Promise<void>;
  /** Creates a table projection's tables for its version (idempotent). */
  migrate(name: string, version: number, tables: Readonly<Record<string, string>>): Promise<Readonly<Record<string, string>>>;
  /**
   * Says `owner` is alive for `leaseMs` (workers of `name@version`) and returns the live workers, sorted, this one
   * included: how workers share the partitions.
   */
  heartbeat(name: string, version: number, owner: string, leaseMs: number): Promise<readonly string[]>;
  /** Forgets a worker (on a clean stop). */
  leave(name: string, version: number, owner: string): Promise<void>;
  /** Every partition of every projection (or of `name`), sorted by name, version, partition. */
  status(name?: string): Promise<readonly PartitionStatus[]>;
  /** The parked events of a projection version, by position. */
  parked(name: string, version: number): Promise<readonly ParkedRecord[]>;
  /**
   * Drops a projection version: its checkpoints, documents, leases, parked events (and tables, when it has). Dropping
   * the live version (see `swap`) also forgets which version is live (and drops the live views).
   */
  drop(name: string, version: number): Promise<void>;
  /** The version `swap` made live last, or null when none was (then the highest version counts as live). */
  liveVersion(name: string): Promise<number | null>;
  /**
   * Makes `version` the live one, at once for every reader (`steerlog projections rebuild` calls it once the version
   * caught up). PostgreSQL: in one transaction, the live views `<schema>.<name>_<table>` of a table projection are
   * replaced by views of this version's tables, so readers that query the views switch with no downtime. The other
   * versions are kept until dropped.
   */
  swap(name: string, version: number): Promise<void>;
  close(): Promise<void>;
}
