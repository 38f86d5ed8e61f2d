import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../host/actor.js';

/** A bearer token and the principal it authenticates. */
export interface BearerToken {
  readonly principal: string;
  readonly token: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * The principal an `Authorization: Bearer …` header authenticates, or null. Compares SHA-256 digests with
 * `timingSafeEqual` (equal lengths, constant time), and checks every token so the time does not say which matched.
 */
export const authenticate = (header: string | undefined, tokens: readonly BearerToken[]): Principal | null => {
  const m = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '');
  const offered = digest(m ? m[1]! : '');
  let found: Principal | null = null;
  for (const t of tokens) if (timingSafeEqual(offered, digest(t.token)) && m) found ??= { id: t.principal };
  return found;
};

/** Hosts that are loopback addresses: binding there needs no token. */
export const isLoopback = (hostname: string): boolean => hostname === 'localhost' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
