import { z } from 'zod';
import { HostSessionIdSchema } from './identities.js';
import { PromptContentBlockSchema } from './prompt-content.js';
import { HistoryEntrySchema } from './session-methods.js';

/** The `subagent.*` methods of the Host: the payload each accepts and the result it returns. */

// ---- requests --------------------------------------------------------------------------------------------------

/** The payload of `subagent.prompt`: a follow-up from the user to a continuable child of a live parent. */
export const SubagentPromptRequestSchema = z
  .object({
    parentSessionId: HostSessionIdSchema,
    childSessionId: HostSessionIdSchema,
    mode: z.literal('continuable'),
    content: z.array(PromptContentBlockSchema),
    clientTimeZone: z.string().max(100).optional(),
  })
  .strict();
/** The payload of `subagent.interrupt`: cancel a resident child's current work on behalf of its parent's user. */
export const SubagentInterruptRequestSchema = z
  .object({ parentSessionId: HostSessionIdSchema, childSessionId: HostSessionIdSchema, mode: z.literal('continuable') })
  .strict();
/** The payload of `subagent.list`: the live children of one parent session. */
export const SubagentListRequestSchema = z.object({ parentSessionId: HostSessionIdSchema }).strict();
/** The payload of `subagent.history`: a page of a child's durable events, named by its parent (a direct child, either mode). */
export const SubagentHistoryRequestSchema = z
  .object({
    parentSessionId: HostSessionIdSchema,
    childSessionId: HostSessionIdSchema,
    /** Return events with seq strictly greater than this. @defaultValue -1 (from the start) */
    after: z.number().int().min(-1).optional(),
    /** @defaultValue 200 */
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

// ---- results ---------------------------------------------------------------------------------------------------

/** The result of `subagent.prompt`: the id of the message the child's inbox accepted. */
export const SubagentPromptResultSchema = z.object({ messageId: z.string() }).strict();
/** One live child as `subagent.list` reports it. */
export const SubagentEntrySchema = z
  .object({
    childSessionId: z.string(),
    parentSessionId: z.string(),
    mode: z.enum(['continuable', 'one-shot']),
    state: z.enum(['running', 'waiting', 'settled', 'absent']),
    epoch: z.number().int(),
    label: z.string(),
  })
  .strict();
/** The result of `subagent.list`: the parent's live children, and whether the parent is live here (a hint: a prompt checks again). */
export const SubagentListResultSchema = z.object({ entries: z.array(SubagentEntrySchema), parentAvailable: z.boolean() }).strict();

/** What `subagent.history` says of the child: its mode, label (from its own descriptor) and state on this host. */
export const SubagentHistoryChildSchema = z
  .object({
    childSessionId: z.string(),
    parentSessionId: z.string(),
    mode: z.enum(['continuable', 'one-shot']),
    label: z.string(),
    /** `absent`: no activation on this host (a one-shot child, or a continuable one that settled or runs elsewhere). */
    state: z.enum(['running', 'waiting', 'settled', 'absent']),
  })
  .strict();
/**
 * The result of `subagent.history`: the child, whether its parent is live here (a hint: a prompt checks again), and
 * a page of its classified durable events in the shape of `session.history`.
 */
export const SubagentHistoryResultSchema = z
  .object({ child: SubagentHistoryChildSchema, parentAvailable: z.boolean(), events: z.array(HistoryEntrySchema), lastSeq: z.number().int(), nextAfter: z.number().int().nullable() })
  .strict();
