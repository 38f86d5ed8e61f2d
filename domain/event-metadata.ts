import { z } from 'zod';
import { findNonJsonPath } from './json.js';

/** The kinds of actor: a `user` (a person or client, as the host authenticated it), a `plugin` (code the deployment installed: a hook, a tool, a policy), a `parent-session` (a session that started this one as a child), a `child-session` (a child reporting to its parent), `system` (steerlog itself: shutdown, disposal). */
export const ACTOR_KINDS = ['user', 'plugin', 'parent-session', 'child-session', 'system'] as const;
/** The zod schema of {@link ActorKind}. */
export const ActorKindSchema = z.enum(ACTOR_KINDS);
/** What kind of principal an actor is (see {@link ACTOR_KINDS}). */
export type ActorKind = z.infer<typeof ActorKindSchema>;
/** Is this one of the {@link ACTOR_KINDS}? */
export const isActorKind = (value: unknown): value is ActorKind => (ACTOR_KINDS as readonly unknown[]).includes(value);

/** Who did something: an id (a user name, a plugin name, a session id) and what kind of principal that is. */
export interface Actor {
  readonly id: string;
  readonly kind: ActorKind;
}

/** The metadata that records `actor`: `{actor: id, actorKind: kind}`. */
export const actorMetadata = (actor: Actor): { readonly actor: string; readonly actorKind: ActorKind } => ({ actor: actor.id, actorKind: actor.kind });

/**
 * The actor an event's metadata records, as audit tools show it: `{actor, actorKind}`, each null when the event
 * does not say (a log written before actors were recorded shows `null`, never a guess).
 */
export const recordedActor = (metadata: EventMetadata | undefined): { readonly actor: string | null; readonly actorKind: ActorKind | null } =>
  // an event without metadata (most of a log) shares one answer
  metadata === undefined
    ? NO_ACTOR
    : {
        actor: typeof metadata.actor === 'string' ? metadata.actor : null,
        actorKind: isActorKind(metadata.actorKind) ? metadata.actorKind : null,
      };

const NO_ACTOR: { readonly actor: null; readonly actorKind: null } = Object.freeze({ actor: null, actorKind: null });

/**
 * What an event says about where it came from — the `metadata` field every event-sourcing library has.
 * - `actor`: who caused the event (a user or service id, as the host authenticated it);
 * - `actorKind`: what kind of principal `actor` is (one of {@link ACTOR_KINDS});
 * - `correlationId`: groups the events of one conversation, request or job;
 * - `causationId`: the id of the event (or external message) that caused this one;
 * - any other key: the deployment's own (lossless JSON).
 * Metadata is part of the hash chain: changing it after the fact breaks verification.
 */
export const EventMetadataSchema = z
  .object({
    actor: z.string().min(1).optional(),
    actorKind: ActorKindSchema.optional(),
    correlationId: z.string().min(1).optional(),
    causationId: z.string().min(1).optional(),
  })
  .catchall(z.unknown())
  .superRefine((m, ctx) => {
    const bad = findNonJsonPath(m);
    if (bad !== null) ctx.addIssue({ code: z.ZodIssueCode.custom, path: bad.replace(/^\$\.?/, '').split('.').filter(Boolean), message: 'not lossless JSON' });
  });

/** Provenance of one event. */
export interface EventMetadata {
  readonly actor?: string;
  readonly actorKind?: ActorKind;
  readonly correlationId?: string;
  readonly causationId?: string;
  readonly [key: string]: unknown;
}

