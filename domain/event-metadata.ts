import { z } from 'zod';
import { findNonJsonPath } from './json.js';

/**
 * What an event says about where it came from — the `metadata` field every event-sourcing library has.
 * - `actor`: who caused the event (a user or service id, as the host authenticated it);
 * - `correlationId`: groups the events of one conversation, request or job;
 * - `causationId`: the id of the event (or external message) that caused this one;
 * - any other key: the deployment's own (lossless JSON).
 * Metadata is part of the hash chain: changing it after the fact breaks verification.
 */
export const EventMetadataSchema = z
  .object({
    actor: z.string().min(1).optional(),
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
  readonly correlationId?: string;
  readonly causationId?: string;
  readonly [key: string]: unknown;
}

export { CHAIN_HASH_PATTERN } from './event-chain.js';
