/**
 * A client subscription (`subscribeToStream` / `subscribeToAll` of `@eventstore/db-client` 6.2.1 or
 * `@kurrent/kurrentdb-client` 1.3.1, whose subscriptions work alike) as the port's subscription messages, with the
 * caught-up marker placed where it belongs on every server version.
 */
import type { WireResolvedEvent as ResolvedEvent } from './client-driver.js';
import type { Readable } from 'node:stream';
import type { RecordedEvent, SubscriptionMessage } from '../../../runtime/ports/event-store.js';
import { StreamDeletedError } from '../../../runtime/ports/store-errors.js';
import { fromResolved, isStreamDeleted, toStoreError, toSubscriptionError } from './mapping.js';

/** The client's subscription object, with the (runtime-public, typed-protected) conversion hook it calls per event. */
export type ClientSubscription = Readable & {
  unsubscribe(): Promise<void>;
  convertGrpcEvent: (e: unknown) => ResolvedEvent;
};

/** Where a subscription is caught up: `'now'` (nothing stored to catch up on), or the test for the head event. */
export type Head = 'now' | ((e: RecordedEvent) => boolean);

export interface SubscriptionSpec {
  /** Opens the client subscription (called after `head`). */
  readonly open: () => ClientSubscription;
  /** Reads the head when the subscription starts (servers before 24.2 send no `caught_up`). */
  readonly head: () => Promise<Head>;
  /** Events before the port's start point are dropped (the server starts strictly after a revision/position). */
  readonly keep: (e: RecordedEvent) => boolean;
  /** `$all` only: is this event one of steerlog's? Others are skipped without being parsed. */
  readonly visible?: (r: ResolvedEvent) => boolean;
  /** `$all` only: makes the check, for one subscription, that skips a tombstoned stream's events (see retired-streams.ts). */
  readonly retired?: () => (stream: string) => Promise<boolean>;
  /** A stream subscription's stream (the port's name): the server's "stream deleted" becomes `StreamDeletedError`. */
  readonly stream?: string;
  readonly streamPrefix: string;
  readonly signal: AbortSignal | undefined;
  /** Aborted when the store closes. */
  readonly closing: AbortSignal;
  readonly isClosed: () => boolean;
  readonly what: string;
  /** The product name in error messages (`EventStoreDB`, `KurrentDB`). */
  readonly product: string;
}

const NEVER = new Promise<never>(() => {});

/**
 * Events in order, one `caught-up`, then live events. The marker goes right after the head event read when the
 * subscription started (at once when there is nothing to catch up on), or where the server's `caught_up` fell in
 * the event sequence, whichever comes first. The client emits `caughtUp` as a side event while its events are
 * buffered, so the count of events the client had converted when it fired places that marker.
 */
export const portSubscription = (spec: SubscriptionSpec): AsyncIterable<SubscriptionMessage> => {
  const { open, head, keep, visible, retired: retiredCheck, stream, streamPrefix: prefix, signal, closing, isClosed, what, product } = spec;
  return {
    async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionMessage> {
      if (signal?.aborted || isClosed()) return;
      let reached: Head;
      try {
        reached = await head();
      } catch (e) {
        if (signal?.aborted || isClosed()) return;
        throw toStoreError(e, what, product);
      }
      if (signal?.aborted || isClosed()) return;
      const sub = open();
      let converted = 0;
      const convert = sub.convertGrpcEvent;
      if (typeof convert !== 'function') throw new Error(`unsupported ${product} client version: no subscription conversion hook`);
      sub.convertGrpcEvent = (e: unknown): ResolvedEvent => {
        converted++;
        return convert.call(sub, e);
      };
      let caughtUpAt: number | null = null;
      let markCaughtUp: () => void = () => {};
      const caughtUp = new Promise<'caught-up'>((resolve) => {
        markCaughtUp = () => resolve('caught-up');
      });
      sub.on('caughtUp', () => {
        if (caughtUpAt === null) {
          caughtUpAt = converted;
          markCaughtUp();
        }
      });
      let onStop: () => void = () => {};
      const stopped = new Promise<'stop'>((resolve) => {
        onStop = () => resolve('stop');
      });
      signal?.addEventListener('abort', onStop, { once: true });
      closing.addEventListener('abort', onStop, { once: true });

      const retired = retiredCheck?.();
      const iterator = (sub as AsyncIterable<ResolvedEvent>)[Symbol.asyncIterator]();
      let pending: Promise<IteratorResult<ResolvedEvent>> | null = null;
      let consumed = 0;
      let sentCaughtUp = false;
      try {
        if (reached === 'now') {
          sentCaughtUp = true;
          yield { kind: 'caught-up' };
        }
        for (;;) {
          if (signal?.aborted || isClosed()) return;
          if (!sentCaughtUp && caughtUpAt !== null && consumed >= caughtUpAt) {
            sentCaughtUp = true;
            yield { kind: 'caught-up' };
            continue;
          }
          pending ??= iterator.next();
          const next = await Promise.race([pending, stopped, caughtUpAt === null ? caughtUp : NEVER]);
          if (next === 'stop') return;
          if (next === 'caught-up') continue;
          pending = null;
          if (next.done) return;
          consumed++;
          if (visible && !visible(next.value)) continue;
          const event = fromResolved(next.value, prefix);
          if (!keep(event)) continue;
          // a tombstoned stream's events stay in $all until a scavenge: skipped, but still where caught-up falls
          if (!(retired && (await retired(event.stream)))) yield { kind: 'event', event };
          if (!sentCaughtUp && reached !== 'now' && reached(event)) {
            sentCaughtUp = true;
            yield { kind: 'caught-up' };
          }
        }
      } catch (e) {
        if (signal?.aborted || isClosed()) return;
        if (stream !== undefined && isStreamDeleted(e)) throw new StreamDeletedError(stream, { cause: e });
        throw toSubscriptionError(e, what, product);
      } finally {
        signal?.removeEventListener('abort', onStop);
        closing.removeEventListener('abort', onStop);
        pending?.catch(() => {});
        void sub.unsubscribe().catch(() => {});
        sub.destroy();
      }
    },
  };
};
