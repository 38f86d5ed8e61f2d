import type { EventParseError } from '../domain/errors.js';

/** Stable codes of every error the projections layer raises. Match on `code`, never on the message. */
export type ProjectionErrorCode =
  | 'invalid-recorded-event'
  | 'live-log-gap'
  | 'projection-failed'
  | 'projection-state-not-json'
  | 'projection-fenced'
  | 'projection-partitions-mismatch'
  | 'projection-superseded'
  | 'projection-store-layout';

/** Base class of the projection errors: each has a stable `code`. */
export class ProjectionError extends Error {
  readonly code: ProjectionErrorCode;
  constructor(code: ProjectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProjectionError';
    this.code = code;
  }
}

const hasCode = (e: unknown, code: ProjectionErrorCode): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;

/** A stored event that is not a valid session event (its revision is its seq). Wraps the domain's parse error. */
export class InvalidRecordedEventError extends ProjectionError {
  declare readonly code: 'invalid-recorded-event';
  constructor(
    readonly stream: string,
    readonly revision: bigint,
    readonly position: bigint,
    override readonly cause: EventParseError | Error,
  ) {
    super('invalid-recorded-event', `stream "${stream}" revision ${revision} (position ${position}): ${cause.message}`, { cause });
    this.name = 'InvalidRecordedEventError';
  }
}
/** Is this a {@link InvalidRecordedEventError}? (by its stable `code`) */
export const isInvalidRecordedEventError = (e: unknown): e is InvalidRecordedEventError => hasCode(e, 'invalid-recorded-event');

/** An in-process live log announced an event whose seq is past the next expected one and its `events` do not hold the missing ones. */
export class LiveLogGapError extends ProjectionError {
  declare readonly code: 'live-log-gap';
  constructor(readonly expectedSeq: number, readonly receivedSeq: number) {
    super('live-log-gap', `live log: expected seq ${expectedSeq}, received seq ${receivedSeq}`);
    this.name = 'LiveLogGapError';
  }
}
/** Is this a {@link LiveLogGapError}? (by its stable `code`) */
export const isLiveLogGapError = (e: unknown): e is LiveLogGapError => hasCode(e, 'live-log-gap');

/**
 * A projection stopped on an event it could not fold: its `evolve` (or `filter`) threw, or the event does not parse.
 * Nothing at or after `position` is checkpointed; once fixed, a new run resumes from the last checkpoint.
 */
export class ProjectionFailedError extends ProjectionError {
  declare readonly code: 'projection-failed';
  constructor(
    readonly projection: string,
    readonly version: number,
    readonly stream: string,
    /** The failing event's position in the run's coordinates (revision for one stream, global position for all). */
    readonly position: bigint,
    override readonly cause: unknown,
  ) {
    super(
      'projection-failed',
      `projection "${projection}"@${version} failed on stream "${stream}" at position ${position}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'ProjectionFailedError';
  }
}
/** Is this a {@link ProjectionFailedError}? (by its stable `code`) */
export const isProjectionFailedError = (e: unknown): e is ProjectionFailedError => hasCode(e, 'projection-failed');

/** A projection's state is not lossless JSON, so it cannot be checkpointed. */
export class ProjectionStateNotJsonError extends ProjectionError {
  declare readonly code: 'projection-state-not-json';
  constructor(readonly projection: string, readonly path: string) {
    super('projection-state-not-json', `projection "${projection}": its state is not lossless JSON at ${path}`);
    this.name = 'ProjectionStateNotJsonError';
  }
}
/** Is this a {@link ProjectionStateNotJsonError}? (by its stable `code`) */
export const isProjectionStateNotJsonError = (e: unknown): e is ProjectionStateNotJsonError => hasCode(e, 'projection-state-not-json');

/**
 * A worker's commit (or lease renewal) was refused: another worker took the partition's lease since (its epoch is
 * higher), or the commit would move the checkpoint backwards. The commit's transaction was rolled back: nothing of it
 * is visible. The worker drops the partition and never commits to it again under this lease.
 */
export class ProjectionFencedError extends ProjectionError {
  declare readonly code: 'projection-fenced';
  constructor(
    readonly projection: string,
    readonly version: number,
    readonly partition: number,
    /** The epoch the refused worker held. */
    readonly epoch: number,
    /** What the store found instead: the current epoch, or the checkpoint it would have moved backwards. */
    readonly reason: string,
  ) {
    super('projection-fenced', `projection "${projection}"@${version} partition ${partition}: commit under epoch ${epoch} refused: ${reason}`);
    this.name = 'ProjectionFencedError';
  }
}
/** Is this a {@link ProjectionFencedError}? (by its stable `code`) */
export const isProjectionFencedError = (e: unknown): e is ProjectionFencedError => hasCode(e, 'projection-fenced');

/** A worker asked for a projection version with a partition count other than the one its checkpoints were built with. */
export class ProjectionPartitionsMismatchError extends ProjectionError {
  declare readonly code: 'projection-partitions-mismatch';
  constructor(readonly projection: string, readonly version: number, readonly stored: number, readonly asked: number) {
    super(
      'projection-partitions-mismatch',
      `projection "${projection}"@${version}: its checkpoints are for ${stored} partition(s), not ${asked}: bump the version (or rebuild) to change the partition count`,
    );
    this.name = 'ProjectionPartitionsMismatchError';
  }
}
/** Is this a {@link ProjectionPartitionsMismatchError}? (by its stable `code`) */
export const isProjectionPartitionsMismatchError = (e: unknown): e is ProjectionPartitionsMismatchError => hasCode(e, 'projection-partitions-mismatch');

/**
 * A worker's projection version is no longer the live one: `projections rebuild` swapped a newer version in. The
 * worker was stopped (its batch committed, its leases released); start the workers of the new module.
 */
export class ProjectionSupersededError extends ProjectionError {
  declare readonly code: 'projection-superseded';
  constructor(readonly projection: string, readonly version: number, readonly live: number) {
    super(
      'projection-superseded',
      `projection "${projection}"@${version} was superseded: version ${live} is live (swapped in by projections rebuild); this worker stopped — run the module of version ${live}`,
    );
    this.name = 'ProjectionSupersededError';
  }
}
/** Is this a {@link ProjectionSupersededError}? (by its stable `code`) */
export const isProjectionSupersededError = (e: unknown): e is ProjectionSupersededError => hasCode(e, 'projection-superseded');

/**
 * A projection store's directory holds files of a layout this build does not read (for the file store: the journal and
 * lease files `p<k>.journal` / `p<k>.lease.json` of builds before the per-partition entry logs). Nothing was read or
 * changed: rebuild the projection into a new directory (or a new version), or run it with the build that wrote them.
 */
export class ProjectionStoreLayoutError extends ProjectionError {
  declare readonly code: 'projection-store-layout';
  constructor(readonly directory: string, readonly found: string) {
    super(
      'projection-store-layout',
      `projection store ${directory}: ${found} is of an older layout this build does not read; nothing was changed — rebuild into a new directory or version`,
    );
    this.name = 'ProjectionStoreLayoutError';
  }
}
/** Is this a {@link ProjectionStoreLayoutError}? (by its stable `code`) */
export const isProjectionStoreLayoutError = (e: unknown): e is ProjectionStoreLayoutError => hasCode(e, 'projection-store-layout');
