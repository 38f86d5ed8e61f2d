import { z } from 'zod';
import { DSH_ERROR_CODES } from '../../../formats/dsh/dsh-errors.js';
import { seq } from './fields.js';

/**
 * What the outputs say of a log that is not steerlog's own (a harness log read through formats/dsh/): where it came
 * from, its errors and its steps.
 */

/** An error reading a harness log, with the harness seq it was found at (null: not tied to an event). */
export const sourceError = z.object({ seq: seq.nullable(), code: z.enum(DSH_ERROR_CODES), message: z.string() }).strict();
const harnessRoute = z.object({ seq, provider: z.string(), model: z.string(), contextWindow: seq.nullable() }).strict();
/** One step of a harness log as its request and stream events tell it (see formats/dsh/dsh-steps.ts). */
export const harnessStep = z
  .object({
    turn: seq,
    step: seq,
    startSeq: seq,
    endSeq: seq.nullable(),
    /** Its step/end is one the reader synthesized: the log ends inside the step. */
    synthesizedEnd: z.boolean(),
    entered: z.array(z.string()),
    route: harnessRoute.nullable(),
    requests: z.array(z.object({ seq, reason: z.enum(['initial', 'resume', 'change']) }).strict()),
    chunks: seq,
    answers: z.array(z.object({ seq, messageId: z.string().nullable(), text: z.string(), toolCalls: z.array(z.string()), interrupted: z.boolean(), cited: seq }).strict()),
  })
  .strict();
/** Where a log that is not steerlog's own came from (absent for steerlog's logs). */
export const auditSource = z
  .object({
    format: z.literal('dsh'),
    seqOffset: z.literal(1),
    compression: z.enum(['none', 'zstd']),
    frames: seq.nullable(),
    harnessEvents: seq,
    ignored: z.array(z.object({ type: z.string(), count: seq }).strict()),
    /** An unfinished last append, not read — but for `recovered` bytes of whole lines decoded from a torn zstd frame. */
    tornTail: z.object({ offset: seq, bytes: seq, recovered: seq }).strict().nullable(),
    /** A fork's seed: the header's seedLength and the harness seq of the end-seed that closes it (null: none found). */
    seed: z.object({ length: seq, endSeedSeq: seq.nullable() }).strict().nullable(),
    /** A child's kind and the harness seq of its own subagent/descriptor (null: it has none after its seed). */
    child: z.object({ kind: z.enum(['continuable', 'one-shot']), descriptorSeq: seq.nullable() }).strict().nullable(),
    /** Every request/context read: the model route from that (report) seq on. */
    routes: z.array(harnessRoute),
    /** Steps that streamed chunks but committed no assistant message. */
    unanswered: z.array(z.object({ turn: seq, step: seq, chunks: seq }).strict()),
    /** Packed chunk rows read, and the assistant/chunk events they were decoded into. */
    packed: z.object({ rows: seq, chunks: seq }).strict(),
    /** The closing synthesized for a turn the log ends inside (the harness's crash rule): its first seq and types. */
    synthesized: z.object({ fromSeq: seq, types: z.array(z.string()) }).strict().nullable(),
    error: sourceError.nullable(),
  })
  .strict();
