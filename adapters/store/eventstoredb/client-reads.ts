import type { Readable } from 'node:stream';
import type { GlobalPosition } from '../../../runtime/ports/event-store.js';
import { StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import type { ClientDriver, WireClient, WireReadFrom, WireResolvedEvent } from './client-driver.js';
import { isStreamDeleted, isStreamNotFound, isSystemEvent, packPosition, toStoreError, unpackPosition } from './mapping.js';

/**
 * The EventStoreDB/KurrentDB store's reads of the server, below the port: iterating a client read (its errors as the
 * port's, cancelled on an early exit or when the store closes), which `$all` events the port shows, the last of them,
 * and whether a stream is tombstoned. The store (grpc-event-store.ts) maps what they yield to the port's events.
 */

/**
 * A client read: a `Readable` with `cancel()` (`@eventstore/db-client`, a Transform the client pipes the gRPC call's
 * stream into, announcing it with the `'pipe'` event) or an async generator (`@kurrent/kurrentdb-client`).
 */
export type ClientRead = AsyncIterable<WireResolvedEvent> &
  Partial<Pick<Readable, 'destroy'>> & {
    cancel?(): Promise<void>;
    once?(event: 'pipe', listener: (source: Readable) => void): unknown;
  };

/** What the reads need from their store. */
export interface ClientReadsDeps {
  readonly client: WireClient;
  readonly driver: ClientDriver;
  /** The prefix of steerlog's stream names on the server. */
  readonly prefix: string;
  /** Aborted when the store closes: every read in flight is cancelled. */
  readonly closing: AbortSignal;
  readonly isClosed: () => boolean;
  /** Told when a server answer reveals a tombstoned stream (the port's name). */
  readonly onDeleted: (stream: string) => void;
  /** Is this stream (the port's name) known to be tombstoned? */
  readonly isDeleted: (stream: string) => boolean;
}

/** A tombstone met by a stream read: yield nothing (`'empty'`: the port reads a deleted stream as empty) or throw. */
export interface TombstoneHandling {
  readonly stream: string;
  readonly deleted: 'empty' | 'throw';
}

/** The server reads of one store. */
export class ClientReads {
  readonly #deps: ClientReadsDeps;

  constructor(deps: ClientReadsDeps) {
    this.#deps = deps;
  }

  /**
   * Iterates a client read, mapping "stream not found" to nothing and other errors to port errors; cancels the call
   * on early exit. A stream read (`tombstone`) answered "stream deleted" records the deletion, then yields nothing
   * or throws `StreamDeletedError`, as `tombstone.deleted` says.
   */
  async *iterate(read: ClientRead, what: string, tombstone?: TombstoneHandling): AsyncGenerator<WireResolvedEvent> {
    const { closing, isClosed, driver } = this.#deps;
    let finished = false;
    let stopped = false;
    // The gRPC call's own stream (esdb), which the client pipes into `read`. Cancelling the call does nothing once the
    // server has ended it, and destroying `read` unpipes and pauses the call's stream: if the server's end had already
    // arrived (or arrives before the cancel, which the client defers to the next turn), the paused stream holds its
    // end unread and never finishes, and the client's dispose(), which waits for every call's stream to finish, would
    // keep the store's close() waiting forever. So a stopped read destroys the call's stream too.
    let call: Readable | undefined;
    const endCall = (): void => {
      if (call !== undefined && !call.destroyed) call.destroy();
    };
    read.once?.('pipe', (source) => {
      call = source;
      if (stopped) endCall(); // stopped before the client had the call's stream
    });
    // A Readable (esdb) is cancelled and destroyed, with its call's stream. An async generator (kurrentdb, whose reads
    // go through its native bridge) is returned by the for-await below on an early exit, but the bridge cannot cancel
    // the server call: it receives the rest in the background (see docs/store-eventstoredb.md, *Two clients*).
    const stop = (): void => {
      stopped = true;
      if (typeof read.cancel === 'function') void read.cancel().catch(() => {});
      read.destroy?.();
      endCall();
    };
    const onClose = (): void => stop();
    closing.addEventListener('abort', onClose, { once: true });
    try {
      for await (const resolved of read) {
        if (isClosed()) return;
        yield resolved;
      }
      finished = true;
    } catch (e) {
      finished = true;
      if (isStreamNotFound(e)) return;
      if (tombstone && isStreamDeleted(e)) {
        this.#deps.onDeleted(tombstone.stream);
        if (tombstone.deleted === 'throw') throw new StreamDeletedError(tombstone.stream, { cause: e });
        return;
      }
      if (isClosed()) return;
      throw toStoreError(e, what, driver.product);
    } finally {
      closing.removeEventListener('abort', onClose);
      if (!finished) stop();
    }
  }

  /** Is this `$all` event one of steerlog's (a stream with the prefix, not a server event)? Nothing else is parsed. */
  isVisible(resolved: WireResolvedEvent): boolean {
    return !isSystemEvent(resolved) && resolved.event!.streamId.startsWith(this.#deps.prefix);
  }

  /**
   * Position of the last `$all` event the port shows (steerlog's, not the server's own, not a tombstoned stream's
   * by `retired`), or null when there is none.
   */
  async lastVisiblePosition(retired: (stream: string) => Promise<boolean>): Promise<GlobalPosition | null> {
    const { client, driver, prefix } = this.#deps;
    // Pages read to their end (see the store's `revision`), newest first, until one holds an event the port shows.
    const PAGE = 64;
    let from: WireReadFrom = driver.END;
    let newestSeen: GlobalPosition | null = null;
    for (;;) {
      let count = 0;
      let oldest: GlobalPosition | null = null;
      let found: GlobalPosition | null = null;
      const read = client.readAll({ direction: 'backwards', fromPosition: from, maxCount: PAGE }) as ClientRead;
      for await (const resolved of this.iterate(read, 'readAll')) {
        count++;
        const p = resolved.event?.position;
        if (!p) continue;
        const position = packPosition(p);
        if (newestSeen !== null && position >= newestSeen) continue; // a page may include its starting position
        oldest = position;
        if (found === null && this.isVisible(resolved) && !(await retired(resolved.event!.streamId.slice(prefix.length)))) found = position;
      }
      if (found !== null) return found;
      if (count < PAGE || oldest === null) return null;
      newestSeen = oldest;
      from = unpackPosition(oldest);
    }
  }

  /** Is this stream (the port's name) tombstoned? Asks the server: one backwards read of at most one event. */
  async isTombstoned(stream: string): Promise<boolean> {
    const { client, driver, prefix } = this.#deps;
    const read = client.readStream(prefix + stream, { direction: 'backwards', fromRevision: driver.END, maxCount: 1 }) as ClientRead;
    for await (const _ of this.iterate(read, `read "${stream}"`, { stream, deleted: 'empty' })) {
      // read to the end (see the store's `revision`)
    }
    return this.#deps.isDeleted(stream);
  }
}
