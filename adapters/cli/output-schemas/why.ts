import { z } from 'zod';
import { EventMetadataSchema } from '../../../domain/event-metadata.js';
import { InboxTargetSchema, TurnEndReasonSchema } from '../../../domain/events.js';
import { ChildStopReasonSchema } from '../../../domain/children/subagent-events.js';
import { seq, storeNotes, time } from './fields.js';
import { harnessStep } from './harness-log.js';
import { fate } from './message-fate.js';

const reason = TurnEndReasonSchema;
const at = { seq, time };
const metadata = { metadata: EventMetadataSchema.optional() };
const fact = z.union([
  z.object({ kind: z.literal('admitted'), ...at, id: z.string(), target: InboxTargetSchema, source: z.object({ kind: z.string() }).passthrough(), ...metadata }).strict(),
  z.object({ kind: z.literal('edited'), ...at, id: z.string(), target: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('moved'), ...at, id: z.string(), to: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('canceled'), ...at, id: z.string(), target: InboxTargetSchema, ...metadata }).strict(),
  z.object({ kind: z.literal('claimed'), ...at, id: z.string(), target: InboxTargetSchema, turn: seq, step: seq, batch: z.array(z.string()) }).strict(),
  z.object({ kind: z.literal('entered'), ...at, id: z.string(), turn: seq, step: seq, rewritten: z.boolean(), inherited: z.literal(true).optional() }).strict(),
  z.object({ kind: z.literal('dropped'), ...at, id: z.string(), turn: seq, step: seq }).strict(),
  z.object({ kind: z.literal('rejected'), ...at, id: z.string(), turn: seq, reason }).strict(),
  z.object({ kind: z.literal('turn-ended'), ...at, id: z.string(), turn: seq, reason, accounted: z.boolean() }).strict(),
]);

/** `steerlog why --json`. */
export const WhyOutputSchema = z
  .object({
    format: z.literal('steerlog-why'),
    version: z.literal(2),
    session: z.string(),
    id: z.string(),
    found: z.enum(['message', 'tool-call', 'both', 'run', 'none']),
    facts: z.array(fact),
    fate: fate.nullable(),
    toolCall: z
      .object({
        callId: z.string(),
        requested: z.object({ seq, time, turn: seq, step: seq }).strict().nullable(),
        started: z.object({ seq, time, name: z.string(), actor: z.string().nullable() }).strict().nullable(),
        result: z.object({ seq, time, messageId: z.string().nullable(), isError: z.boolean(), errorCode: z.string().nullable() }).strict().nullable(),
        staged: z.array(z.string()),
      })
      .strict()
      .nullable(),
    crossing: z
      .object({
        direction: z.enum(['to-child', 'to-parent']),
        via: z.enum(['send_message', 'subagent.prompt', 'report', 'settlement']),
        messageId: z.string(),
        from: z.object({ session: z.string(), callId: z.string().nullable(), seq: seq.nullable() }).strict(),
        to: z.object({ session: z.string(), facts: z.array(fact), fate: fate.nullable() }).strict(),
      })
      .strict()
      .nullable(),
    events: seq,
    error: z.object({ seq: seq.nullable(), code: z.string(), message: z.string() }).strict().nullable(),
    content: z.object({ state: z.enum(['readable', 'erased', 'unavailable']), keyId: z.string(), text: z.string() }).strict().optional(),
    /** A harness log only: the steps the input entered or the tool call was requested in, from its request and stream events. */
    steps: z.array(harnessStep).optional(),
    /** The child runs the id names (a run id, or a child's session id): open while `endSeq` is null. */
    runs: z
      .array(
        z
          .object({
            runId: z.string(),
            childSessionId: z.string(),
            mode: z.enum(['continuable', 'one-shot']).nullable(),
            epoch: seq,
            startSeq: seq,
            endSeq: seq.nullable(),
            stopReason: ChildStopReasonSchema.nullable(),
          })
          .strict(),
      )
      .optional(),
    /** A harness log only: the closing synthesized for a turn the log ends inside (the harness's crash rule). */
    synthesized: z.object({ fromSeq: seq, types: z.array(z.string()) }).strict().nullable().optional(),
    /** The failed model requests of the steps the input entered or the tool call was requested in (attempts per step). */
    failedRequests: z
      .array(z.object({ turn: seq, step: seq, attempt: seq, seq, code: z.string(), status: z.number().int().optional(), retried: z.boolean() }).strict())
      .optional(),
    /** What the store left unread, present when the log was read from a store (see fields.ts). */
    storeNotes: storeNotes.optional(),
  })
  .strict();
