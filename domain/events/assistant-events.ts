import { z } from 'zod';
import { ContentBlockSchema, MessageIdSchema } from '../message.js';
import { SealedContentSchema } from '../sealed-content.js';
import { int, positiveInt, turnNumber } from './event-fields.js';
import { TurnErrorSchema } from './turn-events.js';

/** The model's output in a step: `assistant/message` (the complete answer) and `assistant/chunk` (a streamed piece). */

// ---- the assistant message ----------------------------------------------------------------------------------------
/** The zod schema of {@link ToolCallBlock}. */
export const ToolCallBlockSchema = z
  .object({ type: z.literal('tool-call'), callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .strict();
/**
 * The zod schema of a reasoning block in an assistant message: the model's reasoning `text`; `signature`, the
 * provider's signature of that reasoning, which it requires to accept the block back in a later request (Anthropic's
 * thinking signature); `redacted`, reasoning the provider returned encrypted (Anthropic's `redacted_thinking` data:
 * opaque, `text` is empty), kept to be sent back as it came.
 */
export const ReasoningBlockSchema = z
  .object({ type: z.literal('reasoning'), text: z.string(), signature: z.string().optional(), redacted: z.string().optional() })
  .strict();
/** The zod schema of {@link AssistantBlock}. */
export const AssistantBlockSchema = z.union([ContentBlockSchema, ToolCallBlockSchema, ReasoningBlockSchema]);
/** One block of an assistant message: text, image, a tool call or reasoning. */
export type AssistantBlock = z.infer<typeof AssistantBlockSchema>;

/** The zod schema of {@link AssistantMessage}. */
export const AssistantMessageSchema = z
  .object({
    role: z.literal('assistant'),
    content: z.array(AssistantBlockSchema),
    source: z.object({ kind: z.literal('model'), provider: z.string(), model: z.string() }).strict().optional(),
    /** The message's own id, when its writer gave it one (the harness does): kept as it is, never minted. */
    id: MessageIdSchema.optional(),
  })
  .strict();
/** A message from the model: its content blocks (text, tool calls, reasoning), and its id when it has one. */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

/** The zod schema of {@link Usage}. */
export const UsageSchema = z
  .object({
    inputTokens: int,
    outputTokens: int,
    /** Input tokens the provider served from its prompt cache (part of `inputTokens`), when it reports them. */
    cachedInputTokens: int.optional(),
  })
  .strict();
/** Tokens a model step used: input, output and, when the provider reports them, cached input tokens. */
export type Usage = z.infer<typeof UsageSchema>;

// ---- assistant/message, assistant/chunk ---------------------------------------------------------------------------
/** The zod schema of {@link AssistantMessageData}. */
export const AssistantMessageDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    message: AssistantMessageSchema,
    usage: UsageSchema.optional(),
    interrupted: z.literal(true).optional(),
    /**
     * Why the model stopped, when the writer records it: `max-tokens` (the answer was cut at its token limit: the
     * runtime ran none of its tool calls, and logs it without them), `tool-calls` or `stop`. steerlog's runtime writes
     * it for a `max-tokens` answer, the one reason the answer's content does not show; a log written before it did
     * has none, and stays valid.
     */
    finishReason: z.enum(['stop', 'tool-calls', 'max-tokens']).optional(),
    /** The answer's text, reasoning and tool arguments, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/**
 * The data of `assistant/message`: the model's complete answer in a step, its usage, whether it was interrupted, and
 * why the model stopped when that is recorded.
 */
export type AssistantMessageData = z.infer<typeof AssistantMessageDataSchema>;

/** The zod schema of {@link AssistantChunkData}. */
export const AssistantChunkDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    chunk: z.object({ type: z.enum(['text', 'reasoning']), text: z.string() }).strict(),
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** The data of `assistant/chunk`: one streamed piece of the model's answer in a step. */
export type AssistantChunkData = z.infer<typeof AssistantChunkDataSchema>;

// ---- request/error ------------------------------------------------------------------------------------------------
/** The zod schema of {@link RequestErrorData}. */
export const RequestErrorDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    /** The failed attempt of the step: 1 for its first request. */
    attempt: positiveInt,
    /** What failed (the facts a `turn/end error` records). */
    error: TurnErrorSchema,
    /** Present when the `request-error` waterfall answered retry: the wait before the next attempt. */
    retryInMs: int.optional(),
    /** The failure's message, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/**
 * The data of `request/error` (written `ignorable: true`): one failed model request of a step — no assistant
 * message is committed for it; the chunks it streamed stay before it — and whether another attempt follows.
 */
export type RequestErrorData = z.infer<typeof RequestErrorDataSchema>;
