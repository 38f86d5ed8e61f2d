import { isKnownEvent, type LogEvent } from '../../domain/events.js';
import type { Projection, ProjectionEventPosition } from './define-projection.js';

/**
 * One stored event into a custom projection's state, exactly as the runner applies it: a known event goes to
 * `evolve` when `filter` (if any) accepts it; an ignorable event of an unknown type goes to `evolveIgnored` (if
 * any); anything else leaves the state as it is. Throws what `filter` or the evolve function throws.
 */
export const applyProjectionEvent = <S>(projection: Projection<S>, state: S, where: ProjectionEventPosition, event: LogEvent): S => {
  if (isKnownEvent(event)) {
    const known = { ...where, event };
    return !projection.filter || projection.filter(known) ? projection.evolve(state, known) : state;
  }
  return projection.evolveIgnored ? projection.evolveIgnored(state, { ...where, event }) : state;
};
