import { z } from 'zod';
import type { EventId } from './brand.js';
import { ContentBlockSchema, UserMessageSchema, type UserMessage } from './message.js';
import {
  SubagentDescriptorDataSchema,
  SubagentEndDataSchema,
  SubagentStartDataSchema,
  type SubagentDescriptorData,
  type SubagentEndData,
  type SubagentStartData,
} from './children/subagent-events.js';

/** The two inbox lists. */
export const InboxTargetSchema = z.enum(['next-turn', 'next-step']);
export type InboxTarget = z.infer<typeof InboxTargetSchema>;

const int = z.number().int().nonnegative().refine(Number.isSafeInteger, 'a safe integer');
const positiveInt = z.number().int().positive().refine(Number.isSafeInteger, 'a safe integer');
const turnNumber = positiveInt;

// ---- session/created -------------------------------------------------------------------------------------------
export const SessionKindSchema = z.enum(['ordinary', 'continuable', 'one-shot']);
export type SessionKind = z.infer<typeof SessionKindSchema>;
export const SessionCreatedDataSchema = z
  .object({
    sessionId: z.string().min(1),
    createdAt: z.number().finite(),
    kind: SessionKindSchema,
    parentSession: z.string().min(1).optional(),
    /** Number of events inherited from the parent (a fork's seed): the inbox replays only events at seq >= seedLength. */
    seedLength: int.optional(),
    /** Who made the session: `subagent` for a child started by its parent session. */
    origin: z.enum(['user', 'fork', 'subagent']).optional(),
    /** A child's distance from its root session (1 for a direct child of a root). */
    delegationDepth: positiveInt.optional(),
  })
  .strict();
export type SessionCreatedData = z.infer<typeof SessionCreatedDataSchema>;

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
export interface InboxSplicedData {
  readonly target: InboxTarget;
  readonly start: number;
  readonly removedCount?: number;
  readonly inserted: readonly UserMessage[];
  readonly outcome?: 'canceled';
}

// ---- turns and steps -------------------------------------------------------------------------------------------
export const TurnStartDataSchema = z.object({ turn: turnNumber }).strict();
export type TurnStartData = z.infer<typeof TurnStartDataSchema>;

export const AbortCauseSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user') }).strict(),
  z.object({ kind: z.literal('parent') }).strict(),
  z.object({ kind: z.literal('hook'), reason: z.string().optional() }).strict(),
  z.object({ kind: z.literal('disposed') }).strict(),
  z.object({ kind: z.literal('legacy') }).strict(),
]);
export type AbortCause = z.infer<typeof AbortCauseSchema>;

export const TurnErrorSchema = z
  .object({
    message: z.string(),
    code: z.string().min(1),
    status: z.number().int().optional(),
    providerRetryAfterMs: z.number().nonnegative().optional(),
    requestId: z.string().optional(),
  })
  .strict();
export type TurnError = z.infer<typeof TurnErrorSchema>;

export const DECLARED_TURN_END_KINDS = ['completed', 'max-tokens', 'blocked', 'interrupted', 'aborted', 'error'] as const;
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

export const TurnEndDataSchema = z.object({ turn: turnNumber, reason: TurnEndReasonSchema }).strict();
export interface TurnEndData {
  readonly turn: number;
  readonly reason: TurnEndReason;
}

export const StepDataSchema = z.object({ turn: turnNumber, step: positiveInt }).strict();
export type StepData = z.infer<typeof StepDataSchema>;

// ---- surface messages ------------------------------------------------------------------------------------------
export const ToolCallBlockSchema = z
  .object({ type: z.literal('tool-call'), callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .strict();
export const ReasoningBlockSchema = z.object({ type: z.literal('reasoning'), text: z.string() }).strict();
export const AssistantBlockSchema = z.union([ContentBlockSchema, ToolCallBlockSchema, ReasoningBlockSchema]);
export type AssistantBlock = z.infer<typeof AssistantBlockSchema>;

export const AssistantMessageSchema = z
  .object({
    role: z.literal('assistant'),
    content: z.array(AssistantBlockSchema),
    source: z.object({ kind: z.literal('model'), provider: z.string(), model: z.string() }).strict().optional(),
  })
  .strict();
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const UsageSchema = z.object({ inputTokens: int, outputTokens: int }).strict();
export type Usage = z.infer<typeof UsageSchema>;

export const AssistantMessageDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    message: AssistantMessageSchema,
    usage: UsageSchema.optional(),
    interrupted: z.literal(true).optional(),
  })
  .strict();
export type AssistantMessageData = z.infer<typeof AssistantMessageDataSchema>;

export const AssistantChunkDataSchema = z
  .object({ turn: turnNumber, step: positiveInt, chunk: z.object({ type: z.enum(['text', 'reasoning']), text: z.string() }).strict() })
  .strict();
export type AssistantChunkData = z.infer<typeof AssistantChunkDataSchema>;

export const ToolCallDataSchema = z
  .object({ turn: turnNumber, step: positiveInt, callId: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .strict();
export type ToolCallData = z.infer<typeof ToolCallDataSchema>;

export const ToolResultMessageSchema = z
  .object({
    role: z.literal('tool'),
    callId: z.string().min(1),
    content: z.array(ContentBlockSchema),
    isError: z.boolean().optional(),
  })
  .strict();
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

export const ToolResultDataSchema = z
  .object({
    turn: turnNumber,
    step: positiveInt,
    message: ToolResultMessageSchema,
    error: z.object({ name: z.string(), code: z.string() }).strict().optional(),
    meta: z.record(z.unknown()).optional(),
  })
  .strict();
export type ToolResultData = z.infer<typeof ToolResultDataSchema>;

export const EndSeedDataSchema = z.object({}).strict();
export type EndSeedData = z.infer<typeof EndSeedDataSchema>;

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
} as const;

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
}
export type EventType = keyof EventDataByType;
export const EVENT_TYPES = Object.keys(EVENT_DATA_SCHEMAS) as readonly EventType[];
export const isEventType = (type: string): type is EventType => Object.prototype.hasOwnProperty.call(EVENT_DATA_SCHEMAS, type);

/** The durable envelope: `seq` is 0-based and contiguous per stream. */
export interface Envelope<T extends string, D> {
  readonly seq: number;
  readonly id: EventId;
  readonly time: number;
  readonly type: T;
  readonly data: D;
  readonly ignorable?: true;
}

/** A typed durable session event. */
export type SessionEvent = { [T in EventType]: Envelope<T, EventDataByType[T]> }[EventType];
export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;
/** An event of a type steerlog does not know, marked `ignorable: true`: kept, never interpreted. */
export type IgnoredEvent = Envelope<string, unknown> & { readonly ignorable: true };
/** What a log line parses to. */
export type LogEvent = SessionEvent | IgnoredEvent;
export const isKnownEvent = (e: LogEvent): e is SessionEvent => isEventType(e.type);

// ---- live notifications (not durable; derivable from the log) --------------------------------------------------
export type InboxNotification =
  | { readonly type: 'agent/inbox/inserted'; readonly message: UserMessage }
  | { readonly type: 'agent/inbox/claimed'; readonly message: UserMessage; readonly turn: number }
  | { readonly type: 'agent/inbox/discarded'; readonly message: UserMessage };
