import type { IgnoredEvent, SessionEvent } from '../../domain/events.js';

/** Where a stored event sits. */
export interface ProjectionEventPosition {
  /** The stream (session) it belongs to. */
  readonly stream: string;
  /** Its revision in its stream (= the session envelope's `seq`). */
  readonly revision: bigint;
  /** Its position in the store's global order. */
  readonly position: bigint;
}

/**
 * One stored event of a known type, as a custom projection's `evolve` sees it. `event` is a {@link SessionEvent}, a
 * union discriminated by `type`: `if (event.type === 'user/message')` narrows `event.data` to the message.
 */
export interface ProjectionEvent extends ProjectionEventPosition {
  /** The typed session event. */
  readonly event: SessionEvent;
}

/** One stored ignorable event of a type steerlog does not know (see `Projection.evolveIgnored`). */
export interface IgnoredProjectionEvent extends ProjectionEventPosition {
  /** The event, kept as stored: its `data` is not interpreted. */
  readonly event: IgnoredEvent;
}

/**
 * A custom projection: a named, versioned left fold over session events.
 *
 * - `name` + `version` key its checkpoint; bump `version` when `evolve` changes meaning: the new version has no
 *   checkpoint yet, so it rebuilds from the start of its source.
 * - The state MUST be lossless JSON (plain objects, arrays, strings, finite numbers, booleans, null): it is
 *   checkpointed together with the position, as JSON text, and restored from it on restart.
 * - `evolve` returns the next state; it may mutate and return the state it was given (the runner owns it and
 *   serializes it when it commits). It must be deterministic. If it throws, the run stops with a
 *   `ProjectionFailedError` (no event is ever skipped silently).
 * - `filter` (optional) says which events `evolve` sees; events it drops still advance the checkpoint.
 * - `evolveIgnored` (optional) folds the ignorable events of types steerlog does not know (plugins' own events, a
 *   newer writer's). Without it they are skipped; either way they advance the checkpoint.
 */
export interface Projection<S> {
  /** Names the projection; with `version`, keys its checkpoint. */
  readonly name: string;
  /** Bump it when `evolve` changes meaning: the new version rebuilds from the start. */
  readonly version: number;
  /** The state before the first event (lossless JSON). */
  readonly initialState: S;
  /** Folds one event of a known type into the state. */
  readonly evolve: (state: S, event: ProjectionEvent) => S;
  /** Which known events `evolve` sees. @defaultValue every event */
  readonly filter?: (event: ProjectionEvent) => boolean;
  /** Folds one ignorable event of an unknown type. @defaultValue skip it */
  readonly evolveIgnored?: (state: S, event: IgnoredProjectionEvent) => S;
}

/** Checks and freezes a projection definition (typed by its state). */
export const defineProjection = <S>(projection: Projection<S>): Projection<S> => {
  if (typeof projection.name !== 'string' || projection.name.length === 0) throw new TypeError('a projection needs a non-empty name');
  if (!Number.isSafeInteger(projection.version) || projection.version < 0) throw new TypeError(`projection "${projection.name}": version must be a non-negative integer`);
  if (typeof projection.evolve !== 'function') throw new TypeError(`projection "${projection.name}": evolve must be a function`);
  if (projection.evolveIgnored !== undefined && typeof projection.evolveIgnored !== 'function') {
    throw new TypeError(`projection "${projection.name}": evolveIgnored must be a function`);
  }
  return Object.freeze({ ...projection });
};

/** Is this value a projection definition (for loading a module's default export)? */
export const isProjection = (value: unknown): value is Projection<unknown> =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Projection<unknown>).name === 'string' &&
  Number.isSafeInteger((value as Projection<unknown>).version) &&
  typeof (value as Projection<unknown>).evolve === 'function' &&
  'initialState' in value;
