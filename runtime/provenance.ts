import { actorMetadata, isActorKind, type Actor, type EventMetadata } from '../domain/event-metadata.js';
import { describeValue } from '../domain/json.js';
import { invalidArgument, readOptions } from './arguments.js';

/**
 * Who did it, as a caller names it: an {@link Actor} (`{id, kind}`), or a string, which is the id of a `user`.
 * Recorded in the `metadata.actor` and `metadata.actorKind` of the event the call appends.
 */
export type ActorOption = Actor | string;

/** An `actor` option, read and checked: undefined, a non-empty string (a user), or `{id, kind}`. */
export const readActor = (value: unknown, where: string): Actor | undefined => {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    if (value.length === 0) throw invalidArgument(where, 'expected a non-empty actor id');
    return { id: value, kind: 'user' };
  }
  const { id, kind } = readOptions(value, where, ['id', 'kind']);
  if (typeof id !== 'string' || id.length === 0) throw invalidArgument(`${where}.id`, `expected a non-empty string, got ${describeValue(id)}`);
  if (!isActorKind(kind)) throw invalidArgument(`${where}.kind`, `expected user, plugin, parent-session, child-session or system, got ${describeValue(kind)}`);
  return { id, kind };
};

/**
 * The metadata an input or control call records: its own `metadata`, with the actor set by, in this order, the
 * call's `actor` option, the `actor` its metadata names already, or the runtime's default actor (none: no actor).
 */
export const provenance = (given: { readonly actor?: unknown; readonly metadata?: unknown }, fallback: Actor | undefined, where: string): EventMetadata | undefined => {
  const metadata = given.metadata as EventMetadata | undefined;
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    throw invalidArgument(`${where}.metadata`, `expected a metadata object, got ${describeValue(metadata)}`);
  }
  const actor = readActor(given.actor, `${where}.actor`) ?? (metadata?.actor !== undefined ? undefined : fallback);
  if (actor === undefined) return metadata;
  return { ...metadata, ...actorMetadata(actor) };
};
