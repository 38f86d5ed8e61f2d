import { z } from 'zod';
import { EventMetadataSchema } from '../../../domain/event-metadata.js';
import { hash, seq, time } from './fields.js';

/** One stored event: a line of a JSONL session log. */
export const EnvelopeSchema = z
  .object({
    seq,
    id: z.string().min(1),
    time,
    type: z.string().min(1),
    data: z.unknown(),
    ignorable: z.literal(true).optional(),
    metadata: EventMetadataSchema.optional(),
    hash: hash.optional(),
  })
  .strict();
