import { z } from 'zod';
import { hash, head, seq, time } from './fields.js';

/** `steerlog archive --json`. */
export const ArchiveOutputSchema = z
  .object({
    format: z.literal('steerlog-archive-run'),
    version: z.literal(1),
    file: z.string().nullable(),
    before: time,
    /** Who ran it (`--by`), null when the run named nobody. */
    by: z.string().nullable(),
    dryRun: z.boolean(),
    archived: z.array(
      z
        .object({
          session: z.string(),
          events: seq,
          head: head.nullable(),
          sha256: hash.nullable(),
          deleted: z.boolean(),
          error: z.object({ code: z.string(), message: z.string() }).strict().nullable(),
        })
        .strict(),
    ),
    kept: z.array(
      z
        .object({
          session: z.string(),
          reason: z.enum(['recent', 'open-turn', 'pending-work', 'invalid', 'chain-not-verified', 'family-not-ended']),
          lastTime: time.nullable(),
        })
        .strict(),
    ),
    ok: z.boolean(),
  })
  .strict();
