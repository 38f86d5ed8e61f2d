import { z } from 'zod';
import { seq, time } from './fields.js';

/** `steerlog erase --json`. */
export const EraseOutputSchema = z
  .object({
    format: z.literal('steerlog-erase'),
    version: z.literal(1),
    ok: z.literal(true),
    scope: z.enum(['session', 'actor']),
    subject: z.string(),
    by: z.string().nullable(),
    at: time,
    destroyed: z.array(z.string()),
    alreadyDestroyed: z.array(z.string()),
    sessions: z.array(z.object({ session: z.string(), keyIds: z.array(z.string()), seq: seq.nullable(), missing: z.boolean() }).strict()),
  })
  .strict();
