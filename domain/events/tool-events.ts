import { z } from 'zod';
import { ContentBlockSchema, MessageIdSchema } from '../message.js';
import { SealedContentSchema } from '../sealed-content.js';
import { positiveInt, turnNumber } from './event-fields.js';

/** A tool round in a step: `tool/call` (what the model asked for) and `tool/result` (what the model is shown). */

// ---- tool/call ----------------------------------------------------------------------------------------------------
/** The zod schema of {@link ToolCallData}. */
export const ToolCallDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    callId: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    /** The arguments, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** The data of `tool/call`: the call id, tool name and arguments the model asked for. */
export type ToolCallData = z.infer<typeof ToolCallDataSchema>;

// ---- tool/result --------------------------------------------------------------------------------------------------
/** The zod schema of {@link ToolResultMessage}. */
export const ToolResultMessageSchema = z
  .object({
    role: z.literal('tool'),
    callId: z.string().min(1),
    content: z.array(ContentBlockSchema),
    isError: z.boolean().optional(),
    /** The message's own id, when its writer gave it one (the harness does): kept as it is, never minted. */
    id: MessageIdSchema.optional(),
  })
  .strict();
/** A tool result as the model sees it, and its id when it has one. */
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

/** The zod schema of {@link ToolResultData}. */
export const ToolResultDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    message: ToolResultMessageSchema,
    error: z.object({ name: z.string(), code: z.string() }).strict().optional(),
    meta: z.record(z.unknown()).optional(),
    /** The result's content and `meta`, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** The data of `tool/result`: the result message, and the error that produced it if any. */
export type ToolResultData = z.infer<typeof ToolResultDataSchema>;
