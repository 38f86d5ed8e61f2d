import { z } from 'zod';
import { ClientMessageIdSchema, HostSessionIdSchema } from './identities.js';
import { PromptContentBlockSchema } from './prompt-content.js';

/** The `session.*` methods of the Host: the payload each accepts and the result it returns, with the rows they share. */

// ---- requests --------------------------------------------------------------------------------------------------

/** The payload of `session.create`. */
export const SessionCreateRequestSchema = z
  .object({ sessionId: HostSessionIdSchema.optional(), systemPrompt: z.string().max(100_000).optional() })
  .strict();
/** The payload of `session.list`: every field optional (no payload: every session, oldest first). */
export const SessionListRequestSchema = z
  .object({
    /** The `next` cursor of the previous page, asked in the same `order`. @defaultValue from the first session of the order */
    after: z.string().max(1000).optional(),
    /**
     * `oldest`: by creation time, then id, ascending; `newest`: the reverse, so that a first page holds the sessions
     * created last. @defaultValue 'oldest'
     */
    order: z.enum(['oldest', 'newest']).optional(),
    /** The most sessions in the page; the result then carries `next`. @defaultValue every session */
    limit: z.number().int().min(1).max(1000).optional(),
    /** Only sessions of this kind. */
    kind: z.string().max(100).optional(),
    /** Only forks and children of this session. */
    parentSessionId: z.string().max(1000).optional(),
  })
  .strict();
/** The payload of `session.get`. */
export const SessionGetRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
/** The payload of `session.history` (a page of durable events). */
export const SessionHistoryRequestSchema = z
  .object({
    sessionId: HostSessionIdSchema,
    /** Return events with seq strictly greater than this. @defaultValue -1 (from the start) */
    after: z.number().int().min(-1).optional(),
    /** @defaultValue 200 */
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
/** The payload of `session.prompt` (queue or steer), with its optional message id and time zone. */
export const SessionPromptRequestSchema = z
  .object({
    sessionId: HostSessionIdSchema,
    mode: z.enum(['queue', 'steer']),
    content: z.array(PromptContentBlockSchema),
    clientTimeZone: z.string().max(100).optional(),
    /** An idempotency key: a retry with the same id returns the first receipt and appends nothing. @defaultValue a fresh UUID */
    messageId: ClientMessageIdSchema.optional(),
    /** Reply only once the admission is durable in the store. @defaultValue false */
    durable: z.boolean().optional(),
  })
  .strict();
/** The schema of a `session.updateQueue` action: edit, remove or steer one queued message by id. */
export const QueueActionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('edit'), content: z.array(PromptContentBlockSchema) }).strict(),
  z.object({ kind: z.literal('remove') }).strict(),
  z.object({ kind: z.literal('steer') }).strict(),
]);
/** The payload of `session.updateQueue`. */
export const SessionUpdateQueueRequestSchema = z
  .object({ sessionId: HostSessionIdSchema, itemId: z.string().min(1).max(200), action: QueueActionSchema })
  .strict();
/** The payload of `session.cancel`. */
export const SessionCancelRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
/** The payload of `session.wake`. */
export const SessionWakeRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
/** The payload of `session.fork`. */
export const SessionForkRequestSchema = z
  .object({
    sessionId: HostSessionIdSchema,
    /** Number of the parent's events the child inherits. @defaultValue all of them */
    boundary: z.number().int().min(1).optional(),
    newSessionId: HostSessionIdSchema.optional(),
  })
  .strict();

// ---- results ---------------------------------------------------------------------------------------------------

const UnknownMessageSchema = z.object({ id: z.string(), role: z.literal('user'), content: z.array(z.unknown()), source: z.record(z.unknown()) }).passthrough();
/** A row of a queue snapshot: `claimed` marks a steering row already claimed whose `user/message` is not logged yet. */
export const QueueRowSchema = z
  .object({ id: z.string(), placement: z.enum(['queued', 'steering', 'context']), message: UnknownMessageSchema, claimed: z.literal(true).optional() })
  .strict();
/** One row of a `session/queue` frame: a pending message and its placement. */
export type QueueRow = z.infer<typeof QueueRowSchema>;

/** The schema of a session summary. */
export const SessionSummarySchema = z
  .object({
    sessionId: z.string(),
    kind: z.string(),
    createdAt: z.number(),
    parentSessionId: z.string().optional(),
    /** Live on this host (an Agent is attached here). */
    live: z.boolean(),
    running: z.boolean(),
  })
  .strict();
/** A session as the host lists it: id, status and where its log ends. */
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** The result of `session.create`: the new session's id. */
export const SessionCreateResultSchema = z.object({ sessionId: z.string() }).strict();
/**
 * A row of `session.list`: the summary, and what the store's session catalog says of the log's end when the store
 * keeps one (the JSONL store): last seq, last activity, `broken` when a line of the log could not be read.
 */
export const SessionListRowSchema = SessionSummarySchema.extend({
  lastSeq: z.number().int().optional(),
  lastActivity: z.number().optional(),
  /** A line of the session's log could not be read (a damaged store): the row says what was read before it. */
  broken: z.literal(true).optional(),
}).strict();
/** The result of `session.list`: a summary per session; `next` (with `limit`) resumes after the page, null after the last. */
export const SessionListResultSchema = z.object({ sessions: z.array(SessionListRowSchema), next: z.string().nullable().optional() }).strict();
/** The result of `session.get`: the session's summary, pending lists and last seq. */
export const SessionGetResultSchema = SessionSummarySchema.extend({
  /** seq of the last event in the log (live log when live here, else the store). */
  lastSeq: z.number().int(),
  lastTurn: z.number().int(),
  openTurn: z.number().int().nullable(),
  queue: z.array(QueueRowSchema),
}).strict();
/** One durable event of `session.history`, with the history class of a `user/message`. */
export const HistoryEntrySchema = z
  .object({ event: z.object({ seq: z.number().int(), id: z.string(), time: z.number(), type: z.string(), data: z.unknown() }).passthrough(), class: z.enum(['prompt', 'steering', 'context']).optional() })
  .strict();
/** The result of `session.history`: a page of classified durable events. */
export const SessionHistoryResultSchema = z
  .object({ events: z.array(HistoryEntrySchema), lastSeq: z.number().int(), nextAfter: z.number().int().nullable() })
  .strict();
/** The prompt receipt: the message id and the seq of its admission splice; `duplicate` on an idempotent retry. */
export const PromptReceiptSchema = z
  .object({ accepted: z.literal(true), messageId: z.string(), seq: z.number().int(), durable: z.boolean(), duplicate: z.literal(true).optional() })
  .strict();
/** The receipt of `session.prompt`: the accepted message id and the seq of the splice that admitted it. */
export type PromptReceipt = z.infer<typeof PromptReceiptSchema>;
/** The result of the methods that only acknowledge: `{accepted: true}`. */
export const AcceptedSchema = z.object({ accepted: z.literal(true) }).strict();
/** The result of `session.wake`: accepted, and whether parked work was woken. */
export const WakeResultSchema = z.object({ accepted: z.literal(true), woke: z.boolean() }).strict();
/** The result of `session.fork`: the fork's session id. */
export const SessionForkResultSchema = z.object({ sessionId: z.string() }).strict();
