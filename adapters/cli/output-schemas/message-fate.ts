import { z } from 'zod';
import { ActorKindSchema } from '../../../domain/event-metadata.js';
import { InboxTargetSchema } from '../../../domain/events.js';
import { seq, time } from './fields.js';

/**
 * What became of one input message, from its admission to the end of the turn that accounted for it: shared by
 * `audit --json` (each message's fate) and `why --json`.
 */
export const fate = z
  .object({
    id: z.string(),
    fate: z.enum(['entered', 'rejected', 'dropped', 'canceled', 'pending']),
    admitted: z.object({ seq, time, target: InboxTargetSchema, actor: z.string().nullable(), actorKind: ActorKindSchema.nullable() }).strict().nullable(),
    claimed: z.object({ seq, time, turn: seq, step: seq }).strict().nullable(),
    decided: z.object({ seq, time }).strict().nullable(),
    rewritten: z.boolean(),
    turnEnd: z.object({ seq, turn: seq, reason: z.string(), accounted: z.boolean() }).strict().nullable(),
  })
  .strict();
