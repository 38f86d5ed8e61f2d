import * as E from 'fp-ts/lib/Either.js';
import { Observable, type OperatorFunction } from 'rxjs';
import type { LogEvent } from '../../domain/events.js';
import { initialSessionState, stepSession, type SessionState, type SessionStep } from '../../domain/session-fold.js';

/** One event folded into the session: the event, the state it applied to, and the domain's step (new state, notifications, class, closed turn). */
export interface SessionFrame {
  readonly event: LogEvent;
  readonly before: SessionState;
  readonly step: SessionStep;
}

/**
 * The one fold every built-in projection is built on: `stepSession` over the events, one frame per event.
 * A refusal (seq out of order, a splice that does not fit, an impossible turn event) errors the Observable with the
 * domain's typed error. Share it (`share()`) to feed several projections from one fold.
 * @param initial the state to fold from. @defaultValue initialSessionState()
 */
export const sessionSteps = (initial: SessionState = initialSessionState()): OperatorFunction<LogEvent, SessionFrame> => (source) =>
  new Observable<SessionFrame>((subscriber) => {
    let state = initial;
    return source.subscribe({
      next: (event) => {
        const step = stepSession(state, event);
        if (E.isLeft(step)) {
          subscriber.error(step.left);
          return;
        }
        const before = state;
        state = step.right.state;
        subscriber.next({ event, before, step: step.right });
      },
      error: (e: unknown) => subscriber.error(e),
      complete: () => subscriber.complete(),
    });
  });

/** A stateful per-subscription frame mapper: `emit` pushes zero or more outputs for each frame. */
export const fromFrames =
  <T>(setup: () => (frame: SessionFrame, emit: (value: T) => void) => void): OperatorFunction<SessionFrame, T> =>
  (source) =>
    new Observable<T>((subscriber) => {
      const onFrame = setup();
      const emit = (value: T): void => subscriber.next(value);
      return source.subscribe({
        next: (frame) => onFrame(frame, emit),
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      });
    });
