import type { LogEvent } from '../../domain/events.js';

/** One stored event as a custom projection sees it: where it sits, and the typed session event it carries. */
export interface ProjectionEvent {
  readonly stream: string;
  /** Its revision in its stream (= the session envelope's `seq`). */
  readonly revision: bigint;
  /** Its position in the store's global order. */
  readonly position: bigint;
  readonly event: LogEvent;
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
 */
export interface Projection<S> {
  readonly name: string;
  readonly version: number;
  readonly initialState: S;
  readonly evolve: (state: S, event: ProjectionEvent) => S;
  readonly filter?: (event: ProjectionEvent) => boolean;
}

/** Checks and freezes a projection definition (typed by its state). */
export const defineProjection = <S>(projection: Projection<S>): Projection<S> => {
  if (typeof projection.name !== 'string' || projection.name.length === 0) throw new TypeError('a projection needs a non-empty name');
  if (!Number.isSafeInteger(projection.version) || projection.version < 0) throw new TypeError(`projection "${projection.name}": version must be a non-negative integer`);
  if (typeof projection.evolve !== 'function') throw new TypeError(`projection "${projection.name}": evolve must be a function`);
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
