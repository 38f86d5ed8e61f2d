import { z } from 'zod';
import { chainStatus, seq, storeNotes, time } from './fields.js';

/** `steerlog sessions --json`. */
export const SessionsOutputSchema = z
  .object({
    format: z.literal('steerlog-sessions'),
    version: z.literal(1),
    sessions: z.array(
      z
        .object({
          session: z.string(),
          createdAt: time.nullable(),
          events: seq,
          lastSeq: seq.nullable(),
          lastTime: time.nullable(),
          turns: seq,
          status: z.enum(['idle', 'open-turn', 'pending-work', 'invalid']),
          invalidAt: seq.nullable(),
          chain: chainStatus,
          createdBy: z.string().nullable(),
          actors: z.array(z.string()),
          unattributed: seq,
        })
        .strict(),
    ),
    /** What the store left unread (see fields.ts); sessions always reads a store. */
    storeNotes,
    /** With --limit, --after or --kind: the cursor of the next page (pass it to --after), null after the last. */
    next: z.string().nullable().optional(),
  })
  .strict();
