import type { ChainHashFn } from '../domain/event-chain.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { LogEvent } from '../domain/events.js';
import type { ContentSealer } from './content-sealer.js';
import type { Clock, IdSource } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { HeadSigner } from './ports/head-signer.js';
import type { Logger } from './logger.js';
import type { LoopGate } from './loop-slices.js';

/** Options of {@link SessionLog}: the store and stream, clock, ids, logger, the events it starts from and the write-behind window. */
export interface SessionLogOptions {
  readonly store: EventStore;
  readonly stream: string;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly logger: Logger;
  /** Events already stored (a resumed session): the live log starts with them. @defaultValue [] */
  readonly initial?: readonly LogEvent[];
  /**
   * The seq of `initial[0]` when the log does not hold the stream from its start (a resume from a fold snapshot:
   * the events before it are durable and not kept in memory). @defaultValue 0
   */
  readonly initialBase?: number;
  /**
   * The chain hash of the last stored event, when `initialBase` is above 0 (the head the log continues from; with
   * `initial` not empty, its last event's hash). Required with a base above 0.
   */
  readonly initialHead?: string;
  /**
   * Write-behind window: the first event into an idle queue arms one fixed timer; when it fires the whole queue
   * becomes one durable batch. `checkpoint()` drains at once. @defaultValue 200
   */
  readonly writeBatchDelayMs?: number;
  /**
   * Where a write-behind whose window expired asks for its slice of the event loop before it hands its batch to the
   * store (`RuntimeOptions.turnGate`): the windows of many sessions expire in one timer phase, and each append is
   * checked and encoded for the store at once (a PostgreSQL statement's parameters), so without a gate they all run
   * in that phase. A `checkpoint()` does not wait for it. @defaultValue none: the window's batch is written at once
   */
  readonly writeGate?: LoopGate;
  /** Largest event this log admits; the store's `maxEventBytes` when that is lower. @defaultValue the store's */
  readonly maxEventBytes?: number;
  /** The chain's digest. @defaultValue SHA-256 over RFC 8785 JSON (`sha256ChainHash`) */
  readonly hashOf?: ChainHashFn;
  /** Signs the chain head at every full checkpoint (a `chain/head` event). @defaultValue none: no signed heads */
  readonly signer?: HeadSigner;
  /**
   * Seals message content and tool payloads before they are hashed and stored (crypto-shredding). The live log
   * holds the events as appended (readable); the store gets the sealed form, and the chain covers that.
   * @defaultValue none: content is stored in clear
   */
  readonly sealer?: ContentSealer;
  /**
   * Told of every store append of the write-behind, timed (telemetry's `db.*` spans): its stream, first seq, event
   * count, epoch-ms start and end, and the failure if any. A throw is contained. @defaultValue none
   */
  readonly onAppend?: (append: StoreAppendTiming) => void;
}

/** One store append of the write-behind, as {@link SessionLogOptions.onAppend} is told of it. */
export interface StoreAppendTiming {
  readonly stream: string;
  readonly firstSeq: number;
  readonly events: number;
  /** Epoch milliseconds (fractional). */
  readonly startTime: number;
  readonly endTime: number;
  /** The append's failure, if it failed. */
  readonly error?: unknown;
}

/** Per-append options. */
export interface AppendOptions {
  /** Overrides the clock (crash-repair closers reuse the last real event's time). @defaultValue the clock */
  readonly time?: number;
  /** Provenance of the event (hashed with it). @defaultValue none */
  readonly metadata?: EventMetadata;
}

/** Vetoes an append before it commits by throwing (a "pre-commit dispatch check"). */
export type CommitCheck = (type: string, data: unknown) => void;
/** Sees every appended event once it is logged (a throw is contained: logged as a warning). */
export type EventObserver = (event: LogEvent) => void;
