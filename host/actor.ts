import type { Actor, ActorKind } from '../domain/event-metadata.js';
import type { UserSource } from '../domain/message.js';

/**
 * Who sent a request: the authenticated principal (`local` when the Host runs without a token on loopback; the
 * token's name, or `--principal`, with one). Recorded as the actor of everything the request does.
 */
export interface Principal {
  readonly id: string;
  /** @defaultValue 'user' */
  readonly kind?: ActorKind;
}

/** The actor a principal's requests record in `metadata.actor` / `metadata.actorKind`. */
export const principalActor = (principal: Principal): Actor => ({ id: principal.id, kind: principal.kind ?? 'user' });

/**
 * The source of a prompt's message: the user's rpc id, time zone and actor (the message keeps who sent it; the
 * splice that admits it records the same actor in its metadata).
 */
export const promptSource = (rpcId: string, principal: Principal, clientTimeZone: string | undefined): UserSource & { readonly actor: string } => ({
  kind: 'user',
  rpcId,
  ...(clientTimeZone !== undefined ? { clientTimeZone } : {}),
  actor: principal.id,
});
