import * as E from 'fp-ts/lib/Either.js';
import { type Observable, type OperatorFunction, Observable as Obs } from 'rxjs';
import type { LogEvent } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import type { EventStore, RecordedEvent } from '../../runtime/ports/event-store.js';
import { subscribeAllPages, subscribeStreamPages, type PagedSubscriptionMessage } from '../../runtime/ports/paged-reads.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { InvalidRecordedEventError } from '../errors.js';
import { pullPages } from './pull.js';

/** What a source emits: events in order, then exactly one `caught-up` when the stored history is exhausted, then live events. */
export type SourceMessage<E> = { readonly kind: 'event'; readonly event: E } | { readonly kind: 'caught-up' };

/** Options of {@link fromStream}: the revision to start from, and the most events a stored page holds. */
export interface FromStreamOptions {
  /** First revision to deliver (inclusive). @defaultValue 0n */
  readonly from?: bigint;
  /** Most events one stored page holds (`ReadPagesOptions.pageSize`). @defaultValue the store's own page */
  readonly pageSize?: number;
}

/** Options of {@link fromAll}: the global position to start after, and the most events a stored page holds. */
export interface FromAllOptions {
  /** Deliver events whose global position is strictly greater than `after`. @defaultValue from the beginning */
  readonly after?: bigint;
  /** Most events one stored page holds (`ReadAllPagesOptions.pageSize`). @defaultValue the store's own page */
  readonly pageSize?: number;
}

/**
 * One stream, replayed from `from` and then followed live: a cold Observable of `{kind:'event'}` messages, one
 * `{kind:'caught-up'}` marker at the switch, then live events — no gap and no duplicate at the switch
 * (`subscribeStreamPages`: the store's subscription starts right after the last stored event delivered). The stored
 * part is read a page at a time (`EventStore.readPages`) and each page is emitted synchronously; at most one page is
 * in flight (see `pullPages`). A store without `readPages` is followed through its own subscription, one event at a
 * time. Unsubscribing, even in the middle of a page, ends the store iteration.
 */
export const fromStream = (store: EventStore, stream: string, options: FromStreamOptions = {}): Observable<SourceMessage<RecordedEvent>> =>
  pullPages(
    (signal) => subscribeStreamPages(store, stream, { from: options.from ?? 0n, signal, ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}) }),
    sourceMessagesOf,
  );

const CAUGHT_UP: SourceMessage<RecordedEvent> = Object.freeze({ kind: 'caught-up' });

function* sourceMessagesOf(message: PagedSubscriptionMessage): Generator<SourceMessage<RecordedEvent>> {
  if (message.kind === 'caught-up') {
    yield CAUGHT_UP;
    return;
  }
  for (const event of message.events) yield { kind: 'event', event };
}

/**
 * Every stream in global order, after `after`, then live: `{kind:'event'}` messages in increasing global position,
 * one `{kind:'caught-up'}` marker at the switch, then live events — no gap and no duplicate at the switch
 * (`subscribeAllPages`: the store's `subscribeAll` starts right after the last stored event delivered). The stored
 * part is read a page at a time (`EventStore.readAllPages`) and each page is emitted synchronously; at most one page
 * is in flight. A store without `readAllPages` (EventStoreDB) is followed through its own `subscribeAll`, one event
 * at a time. Unsubscribing, even in the middle of a page, ends the store iteration.
 */
export const fromAll = (store: EventStore, options: FromAllOptions = {}): Observable<SourceMessage<RecordedEvent>> =>
  pullPages(
    (signal) =>
      subscribeAllPages(store, {
        signal,
        ...(options.after !== undefined ? { after: options.after } : {}),
        ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
      }),
    sourceMessagesOf,
  );

/**
 * A stored event as the typed session event it carries: the revision becomes the envelope's `seq`, and the
 * envelope is validated by the domain's `parseEvent`. A refusal names the stream, the revision and the position.
 */
export const toLogEvent = (recorded: RecordedEvent): E.Either<InvalidRecordedEventError, LogEvent> => {
  const seq = Number(recorded.revision);
  if (!Number.isSafeInteger(seq)) {
    return E.left(new InvalidRecordedEventError(recorded.stream, recorded.revision, recorded.position, new Error('revision is not a safe integer')));
  }
  // a store's recorded event is deep-frozen: its data is shared with the typed event, not copied
  const parsed = parseEvent(envelopeOfRecorded(recorded), { shared: true });
  return E.isLeft(parsed) ? E.left(new InvalidRecordedEventError(recorded.stream, recorded.revision, recorded.position, parsed.left)) : parsed;
};

/** Maps a source's recorded events to typed session events; errors the Observable with `InvalidRecordedEventError` on the first invalid one. */
export const parseRecorded = (): OperatorFunction<SourceMessage<RecordedEvent>, SourceMessage<LogEvent>> => (source) =>
  new Obs<SourceMessage<LogEvent>>((subscriber) =>
    source.subscribe({
      next: (message) => {
        if (message.kind === 'caught-up') {
          subscriber.next(message);
          return;
        }
        const parsed = toLogEvent(message.event);
        if (E.isLeft(parsed)) subscriber.error(parsed.left);
        else subscriber.next({ kind: 'event', event: parsed.right });
      },
      error: (e: unknown) => subscriber.error(e),
      complete: () => subscriber.complete(),
    }),
  );

/** Drops the `caught-up` marker: the events-only view of a source. */
export const eventsOnly = <E>(): OperatorFunction<SourceMessage<E>, E> => (source) =>
  new Obs<E>((subscriber) =>
    source.subscribe({
      next: (message) => {
        if (message.kind === 'event') subscriber.next(message.event);
      },
      error: (e: unknown) => subscriber.error(e),
      complete: () => subscriber.complete(),
    }),
  );

/** The typed session events of one stream, replayed then live (no marker): `fromStream` + `parseRecorded` + `eventsOnly`. */
export const sessionEvents = (store: EventStore, stream: string, options: FromStreamOptions = {}): Observable<LogEvent> =>
  fromStream(store, stream, options).pipe(parseRecorded(), eventsOnly());
