import { z } from 'zod';
import { int } from './event-fields.js';

/** The signed chain head, `chain/head` (see docs/audit.md). */

// ---- chain/head ---------------------------------------------------------------------------------------------------
/**
 * A signed chain head: the writer's signature over `{stream, seq, hash}` of the event just before this one, so a
 * holder of the public key can tell a complete log from a truncated or rewritten one. The folds ignore it.
 */
export const ChainHeadDataSchema = z
  .object({
    seq: int,
    hash: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest'),
    keyId: z.string().min(1),
    signature: z.string().min(1),
  })
  .strict();
/** The data of a `chain/head` event. */
export type ChainHeadData = z.infer<typeof ChainHeadDataSchema>;
