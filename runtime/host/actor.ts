import type { UserSource } from '../../domain/message.js';

/** Who sent a request: the authenticated principal (`local` when the Host runs without a token on loopback). */
export interface Principal {
  readonly id: string;
}

/**
 * The source of a prompt's message. The actor is recorded here, in the message source, until events carry
 * metadata; this is the one place that decides where it goes.
 */
export const promptSource = (rpcId: string, principal: Principal, clientTimeZone: string | undefined): UserSource & { readonly actor: string } => ({
  kind: 'user',
  rpcId,
  ...(clientTimeZone !== undefined ? { clientTimeZone } : {}),
  actor: principal.id,
});
