import { z } from 'zod';
import { int, positiveInt } from '../events/event-fields.js';
import { SealedContentSchema } from '../sealed-content.js';

/**
 * The events of continuable and one-shot children.
 *
 * - `subagent/descriptor` sits in the CHILD's log, right after its seed (if any): how to bring the child back
 *   (its mode, model route, persona, tool filter). It is model-hidden: no model request ever carries it.
 * - `subagent/start` / `subagent/end` sit in the PARENT's log: one pair per activation epoch of a child, so the
 *   parent's log alone tells which children it ran, when each epoch began and how each one stopped.
 */

/** How a child can be reached after it was started. */
export const ChildModeSchema = z.enum(['continuable', 'one-shot']);
/** `continuable`: reached later by follow-ups, interrupts, reports and settlement; `one-shot`: returns one result. */
export type ChildMode = z.infer<typeof ChildModeSchema>;

/** Data of `subagent/descriptor`: enough to resume the child with the same route and persona. */
export const SubagentDescriptorDataSchema = z
  .object({
    version: z.literal(1),
    mode: ChildModeSchema,
    /** The provider that started the child (the delegation kind, e.g. `spawn`). */
    provider: z.string().min(1),
    /** A short human label of the child's task. */
    label: z.string(),
    agentProvider: z.string().min(1).optional(),
    agentModel: z.string().min(1).optional(),
    persona: z.string().optional(),
    /** Names of the tools the child may use; absent = every tool of the deployment's child setup. */
    toolFilter: z.array(z.string().min(1)).optional(),
  })
  .strict();
/** Data of `subagent/descriptor`. */
export type SubagentDescriptorData = z.infer<typeof SubagentDescriptorDataSchema>;

/**
 * Why an activation epoch ended, as its own log tells it (see `settlementOutcome`):
 * `completed` (also when no turn accounted for work) · `stopped` (aborted, interrupted by a crash, or its pending
 * work was canceled unrun) · `out-of-room` (max tokens) · `declined` (the pre-step policy refused) · `failed` (an
 * error) · `abnormal` (the start failed before the child accepted its prompt, or the child's log cannot be read).
 */
export const ChildStopReasonSchema = z.enum(['completed', 'stopped', 'out-of-room', 'declined', 'failed', 'abnormal']);
/** Why an activation epoch ended. */
export type ChildStopReason = z.infer<typeof ChildStopReasonSchema>;

/** Data of `subagent/start`: an activation epoch of a child begins (parent log). */
export const SubagentStartDataSchema = z
  .object({
    /** One id per epoch; the matching `subagent/end` carries the same id. */
    runId: z.string().min(1),
    childSessionId: z.string().min(1),
    mode: ChildModeSchema,
    /** 1 for the activation that created the child, then +1 per cold resume. */
    epoch: positiveInt,
    /**
     * The first seq of this epoch in the child's log: where its settlement account is read from when the parent
     * closes the run itself (it was gone when the child settled). Absent in logs written before it was recorded.
     */
    childSeq: int.optional(),
  })
  .strict();
/** Data of `subagent/start`. */
export type SubagentStartData = z.infer<typeof SubagentStartDataSchema>;

/** Data of `subagent/end`: an activation epoch of a child ended (parent log). */
export const SubagentEndDataSchema = z
  .object({
    runId: z.string().min(1),
    childSessionId: z.string().min(1),
    mode: ChildModeSchema,
    epoch: positiveInt,
    stopReason: ChildStopReasonSchema,
    /** The text of the epoch's last assistant message, when it left one. */
    lastAssistantText: z.string().optional(),
    /** `lastAssistantText`, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** Data of `subagent/end`. */
export type SubagentEndData = z.infer<typeof SubagentEndDataSchema>;
