import { z } from 'zod';
import { chainBreak, chainStatus, hash, head, seq, storeNotes } from './fields.js';

/** A session's verdict as `steerlog verify` reports it: its chain, signatures and anchor. */
const sessionVerification = z
  .object({
    stream: z.string(),
    events: seq,
    status: chainStatus,
    chained: seq,
    unchained: seq,
    break: chainBreak.nullable(),
    head: head.nullable(),
    signatures: z
      .object({
        heads: seq,
        lastSignedSeq: seq.nullable(),
        problem: z
          .union([
            z.object({ kind: z.literal('no-signed-head') }).strict(),
            z.object({ kind: z.literal('bad-signature'), seq, keyId: z.string() }).strict(),
            z.object({ kind: z.literal('unknown-key'), seq, keyId: z.string() }).strict(),
            z.object({ kind: z.literal('unsigned-tail'), lastSignedSeq: seq, events: seq }).strict(),
          ])
          .nullable(),
      })
      .strict()
      .nullable(),
    anchor: z.object({ seq, hash, verdict: z.enum(['found', 'missing', 'mismatch']) }).strict().nullable(),
    ok: z.boolean(),
  })
  .strict();

/** `steerlog verify --json`. */
export const VerifyOutputSchema = z.object({ format: z.literal('steerlog-verify'), version: z.literal(1), ok: z.boolean(), sessions: z.array(sessionVerification), storeNotes: storeNotes.optional() }).strict();
