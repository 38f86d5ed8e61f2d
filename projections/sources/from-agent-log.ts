import { Observable } from 'rxjs';
import type { LogEvent } from '../../domain/events.js';
import { LiveLogGapError } from '../errors.js';
import type { SourceMessage } from './from-store.js';

/**
 * The minimal shape of an in-process live session log (the runtime's Agent will satisfy it): the events so far,
 * in seq order from 0, and a listener registration that returns its own removal.
 */
export interface LiveLog {
  readonly events: readonly LogEvent[];
  onEvent(listener: (event: LogEvent) => void): () => void;
}

/**
 * Replays `log.events`, emits one `caught-up`, then follows live events: no gap and no duplicate, guarded by seq.
 * The listener is registered before the replay, so an event appended during the replay (even from inside a
 * subscriber) is delivered once, in order. An announced event with seq below the next expected is a duplicate and
 * is dropped; one above it is filled from `log.events`, and if the log cannot fill the gap the Observable errors
 * with `LiveLogGapError`. Everything is synchronous: nothing is buffered beyond events announced during an emission.
 */
export const fromAgentLog = (log: LiveLog): Observable<SourceMessage<LogEvent>> =>
  new Observable<SourceMessage<LogEvent>>((subscriber) => {
    let nextSeq = 0;
    let caughtUp = false;
    let draining = false;
    const announced: LogEvent[] = [];

    const drain = (): void => {
      if (draining) return;
      draining = true;
      try {
        for (;;) {
          if (subscriber.closed) return;
          const stored = log.events[nextSeq];
          if (stored !== undefined && stored.seq === nextSeq) {
            nextSeq++;
            subscriber.next({ kind: 'event', event: stored });
            continue;
          }
          if (!caughtUp) {
            caughtUp = true;
            subscriber.next({ kind: 'caught-up' });
            continue;
          }
          const head = announced.shift();
          if (head === undefined) return;
          if (head.seq < nextSeq) continue;
          if (head.seq > nextSeq) {
            subscriber.error(new LiveLogGapError(nextSeq, head.seq));
            return;
          }
          nextSeq++;
          subscriber.next({ kind: 'event', event: head });
        }
      } finally {
        draining = false;
      }
    };

    const off = log.onEvent((event) => {
      if (event.seq < nextSeq) return;
      announced.push(event);
      drain();
    });
    drain();
    return off;
  });
