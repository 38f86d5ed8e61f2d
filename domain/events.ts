import { z } from 'zod';
import type { EventId } from './brand.js';
import type { EventMetadata } from './event-metadata.js';
import { ContentBlockSchema, UserMessageSchema, type UserMessage } from './message.js';
import { SealedContentSchema, type SealedContent } from './sealed-content.js';
import {
  SubagentDescriptorDataSchema,
  SubagentEndDataSchema,
  SubagentStartDataSchema,
  type SubagentDescriptorData,
  type SubagentEndData,
  type SubagentStartData,
} from './children/subagent-events.js';
import { int, positiveInt, turnNumber } from './events/event-fields.js';
import {
  EndSeedDataSchema,
  SessionCreatedDataSchema,
  SessionErasedDataSchema,
  type EndSeedData,
  type SessionCreatedData,
  type SessionErasedData,
} from './events/session-events.js';

export * from './events/session-events.js';

/** The two inbox lists. */
export const InboxTargetSchema = z.enum(['next-turn', 'next-step']);
/** One of the two inbox lists: `next-turn` (queued prompts) or `next-step` (steering and context). */
export type InboxTarget = z.infer<typeof InboxTargetSchema>;

// ---- agent/inbox/spliced ---------------------------------------------------------------------------------------
/**
 * One durable mutation of one inbox list. Canonical forms (anything else is refused):
 * - pure insertion: no `removedCount`, no `outcome`, `inserted` non-empty;
 * - claim (pure deletion): `removedCount` >= 1, `inserted` empty, no `outcome`;
 * - cancellation: `removedCount` >= 1, `outcome: 'canceled'`, `inserted` possibly non-empty (a replace).
 */
export const InboxSplicedDataSchema = z
  .object({
    target: InboxTargetSchema,
    start: int,
    removedCount: positiveInt.optional(),
    inserted: z.array(UserMessageSchema),
    outcome: z.literal('canceled').optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.removedCount === undefined && d.outcome !== undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['outcome'], message: 'outcome requires removedCount' });
    }
    if (d.removedCount === undefined && d.inserted.length === 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['inserted'], message: 'a splice that removes nothing must insert something' });
    }
    if (d.removedCount !== undefined && d.outcome === undefined && d.inserted.length > 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['inserted'], message: 'a claim (removal without outcome) inserts nothing' });
    }
  });
/** The data of `agent/inbox/spliced`: one change to one inbox list, in `Array.prototype.splice` coordinates. */
export interface InboxSplicedData {
  readonly target: InboxTarget;
  readonly start: number;
  readonly removedCount?: number;
  readonly inserted: readonly UserMessage[];
  readonly outcome?: 'canceled';
}

// ---- turns and steps -------------------------------------------------------------------------------------------
/** The zod schema of {@link TurnStartData}. */
export const TurnStartDataSchema = z.object({ turn: turnNumber }).strict();
/** The data of `turn/start`: the turn number. */
export type TurnStartData = z.infer<typeof TurnStartDataSchema>;

/** The zod schema of {@link AbortCause}. */
export const AbortCauseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user') }).strict(),
  z.object({ kind: z.literal('parent') }).strict(),
  z.object({ kind: z.literal('hook'), reason: z.string().optional() }).strict(),
  z.object({ kind: z.literal('disposed') }).strict(),
  z.object({ kind: z.literal('legacy') }).strict(),
]);
/** Why a turn was aborted: the user, the parent agent, a hook (with an optional reason), disposal, or a legacy log. */
export type AbortCause = z.infer<typeof AbortCauseSchema>;

/** The zod schema of {@link TurnError}. */
export const TurnErrorSchema = z
  .object({
    message: z.string(),
    code: z.string().min(1),
    status: z.number().int().optional(),
    providerRetryAfterMs: z.number().nonnegative().optional(),
    requestId: z.string().optional(),
  })
  .strict();
/** The error a turn ended with: message, code and the provider's details. */
export type TurnError = z.infer<typeof TurnErrorSchema>;

/** The turn end reasons steerlog declares; a log may carry others (they count as accounting, see the consumed-work fold). */
export const DECLARED_TURN_END_KINDS = ['completed', 'max-tokens', 'blocked', 'interrupted', 'aborted', 'error'] as const;
/** Why a turn ended: completed, max-tokens, blocked, interrupted, aborted (with the cause) or error (with the error). */
export type TurnEndReason =
  | { readonly kind: 'completed' }
  | { readonly kind: 'max-tokens' }
  | { readonly kind: 'blocked' }
  | { readonly kind: 'interrupted' }
  | { readonly kind: 'aborted'; readonly reason: AbortCause }
  | { readonly kind: 'error'; readonly error: TurnError };
const declaredReasonSchemas: Record<string, z.ZodTypeAny> = {
  completed: z.object({ kind: z.literal('completed') }).strict(),
  'max-tokens': z.object({ kind: z.literal('max-tokens') }).strict(),
  blocked: z.object({ kind: z.literal('blocked') }).strict(),
  interrupted: z.object({ kind: z.literal('interrupted') }).strict(),
  aborted: z.object({ kind: z.literal('aborted'), reason: AbortCauseSchema }).strict(),
  error: z.object({ kind: z.literal('error'), error: TurnErrorSchema }).strict(),
};
/** The zod schema of {@link TurnEndReason}. */
export const TurnEndReasonSchema = z
  .object({ kind: z.string().min(1) })
  .passthrough()
  .superRefine((r, ctx) => {
    const schema = declaredReasonSchemas[r.kind];
    if (!schema) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['kind'], message: `unknown turn end reason "${r.kind}"` });
      return;
    }
    const res = schema.safeParse(r);
    if (!res.success) for (const issue of res.error.issues) ctx.addIssue(issue);
  }) as unknown as z.ZodType<TurnEndReason>;

/** The zod schema of {@link TurnEndData}. */
export const TurnEndDataSchema = z.object({ turn: turnNumber, reason: TurnEndReasonSchema, sealed: SealedContentSchema.optional() }).strict();
/** The data of `turn/end`: the turn and why it ended. */
export interface TurnEndData {
  readonly turn: number;
  readonly reason: TurnEndReason;
  /** The error message or abort reason, encrypted (see sealed-content.ts). */
  readonly sealed?: SealedContent;
}

/** The zod schema of {@link StepData}. */
export const StepDataSchema = z.object({ turn: turnNumber, step: positiveInt }).strict();
/** The data of `step/start` and `step/end`: the turn and step numbers. */
export type StepData = z.infer<typeof StepDataSchema>;

// ---- surface messages ------------------------------------------------------------------------------------------
/** The zod schema of {@link ToolCallBlock}. */
export const ToolCallBlockSchema = z
  .object({ type: z.literal('tool-call'), callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .strict();
/** The zod schema of a reasoning block in an assistant message. */
export const ReasoningBlockSchema = z.object({ type: z.literal('reasoning'), text: z.string() }).strict();
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
  })
  .strict();
/** A message from the model: its content blocks (text, tool calls, reasoning). */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

/** The zod schema of {@link Usage}. */
export const UsageSchema = z.object({ inputTokens: int, outputTokens: int }).strict();
/** Tokens a model step used. */
export type Usage = z.infer<typeof UsageSchema>;

/** The zod schema of {@link AssistantMessageData}. */
export const AssistantMessageDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    message: AssistantMessageSchema,
    usage: UsageSchema.optional(),
    interrupted: z.literal(true).optional(),
    /** The answer's text, reasoning and tool arguments, encrypted (see sealed-content.ts). */
    sealed: SealedContentSchema.optional(),
  })
  .strict();
/** The data of `assistant/message`: the model's complete answer in a step, its usage, and whether it was interrupted. */
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

/** The zod schema of {@link ToolResultMessage}. */
export const ToolResultMessageSchema = z
  .object({
    role: z.literal('tool'),
    callId: z.string().min(1),
    content: z.array(ContentBlockSchema),
    isError: z.boolean().optional(),
  })
  .strict();
/** A tool result as the model sees it. */
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

// ---- chain/head ------------------------------------------------------------------------------------------------
/**
 * A signed chain head: the writer's signature over `{stream, seq, hash}` of the event just before this one, so a
 * holder of the public key can tell a complete log from a truncated or rewritten one. The folds ignore it.
 */
export const ChainHeadDataSchema = z
  .object({
    seq: int,
    hash: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest'),
    keyId: z.string().min(1),
    signature: z.string().min(1),
  })
  .strict();
/** The data of a `chain/head` event. */
export type ChainHeadData = z.infer<typeof ChainHeadDataSchema>;

// ---- the catalogue ---------------------------------------------------------------------------------------------
/** Every durable event type steerlog reads, with the schema of its data. */
export const EVENT_DATA_SCHEMAS = {
  'session/created': SessionCreatedDataSchema,
  'session/end-seed': EndSeedDataSchema,
  'agent/inbox/spliced': InboxSplicedDataSchema,
  'turn/start': TurnStartDataSchema,
  'turn/end': TurnEndDataSchema,
  'step/start': StepDataSchema,
  'step/end': StepDataSchema,
  'user/message': UserMessageSchema,
  'assistant/chunk': AssistantChunkDataSchema,
  'assistant/message': AssistantMessageDataSchema,
  'tool/call': ToolCallDataSchema,
  'tool/result': ToolResultDataSchema,
  'subagent/descriptor': SubagentDescriptorDataSchema,
  'subagent/start': SubagentStartDataSchema,
  'subagent/end': SubagentEndDataSchema,
  'chain/head': ChainHeadDataSchema,
  'session/erased': SessionErasedDataSchema,
} as const;

/** The data type of each known event type. */
export interface EventDataByType {
  'session/created': SessionCreatedData;
  'session/end-seed': EndSeedData;
  'agent/inbox/spliced': InboxSplicedData;
  'turn/start': TurnStartData;
  'turn/end': TurnEndData;
  'step/start': StepData;
  'step/end': StepData;
  'user/message': UserMessage;
  'assistant/chunk': AssistantChunkData;
  'assistant/message': AssistantMessageData;
  'tool/call': ToolCallData;
  'tool/result': ToolResultData;
  'subagent/descriptor': SubagentDescriptorData;
  'subagent/start': SubagentStartData;
  'subagent/end': SubagentEndData;
  'chain/head': ChainHeadData;
  'session/erased': SessionErasedData;
}
/** The name of a known event type. */
export type EventType = keyof EventDataByType;
/** Every event type steerlog knows, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as readonly EventType[];
/** Is this a {@link EventType}? (by its stable `code`) */
export const isEventType = (type: string): type is EventType => Object.prototype.hasOwnProperty.call(EVENT_DATA_SCHEMAS, type);

/**
 * The durable envelope: `seq` is 0-based and contiguous per stream. `metadata` says who and what caused the event;
 * `hash` links it to the previous event of its stream (see event-chain.ts). Logs written before the chain have none.
 */
export interface Envelope<T extends string, D> {
  readonly seq: number;
  readonly id: EventId;
  readonly time: number;
  readonly type: T;
  readonly data: D;
  readonly ignorable?: true;
  readonly metadata?: EventMetadata;
  readonly hash?: string;
}

/** A typed durable session event. */
export type SessionEvent = { [T in EventType]: Envelope<T, EventDataByType[T]> }[EventType];
/** The typed event of one known type, e.g. `EventOf<'turn/end'>`. */
export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
/** An event of a type steerlog does not know, marked `ignorable: true`: kept, never interpreted. */
export type IgnoredEvent = Envelope<string, unknown> & { readonly ignorable: true };
/**
 * What a log line parses to: a typed {@link SessionEvent}, or an {@link IgnoredEvent} of a type steerlog does not
 * know. An ignored event's `type` is any string, so comparing `event.type` with a known type does not narrow a
 * `LogEvent`: guard first (`if (!isKnownEvent(event)) return …`), then `switch (event.type)` narrows `event.data`.
 * Custom projections receive known events only (`ProjectionEvent`); ignored ones reach `evolveIgnored`.
 */
export type LogEvent = SessionEvent | IgnoredEvent;
/** Is this an event of a type steerlog knows? Narrows a {@link LogEvent} to a {@link SessionEvent}. */
export const isKnownEvent = (e: LogEvent): e is SessionEvent => isEventType(e.type);
/** Is this an ignorable event of a type steerlog does not know? Narrows a {@link LogEvent} to an {@link IgnoredEvent}. */
export const isIgnoredEvent = (e: LogEvent): e is IgnoredEvent => !isEventType(e.type);

// ---- live notifications (not durable; derivable from the log) --------------------------------------------------
/** A live inbox notification (not stored: derivable from the log): inserted, claimed or discarded. */
export type InboxNotification =
  | { readonly type: 'agent/inbox/inserted'; readonly message: UserMessage }
  | { readonly type: 'agent/inbox/claimed'; readonly message: UserMessage; readonly turn: number }
  | { readonly type: 'agent/inbox/discarded'; readonly message: UserMessage };
