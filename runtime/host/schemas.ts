import { z } from 'zod';

/**
 * The Host's wire contract: every request payload, result and live-mirror frame as a zod schema. Pure zod (no
 * Node import), so a browser bundle can import this file to type and validate what it sends and receives.
 */

// ---- identities ------------------------------------------------------------------------------------------------

/**
 * A session id as the Host accepts it: 1–128 characters of letters, digits, `.`, `_`, `-`, starting with a letter or
 * digit. No `/`, no `..` segment, nothing a store could turn into a path outside its directory.
 */
export const HostSessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a session id is 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit');
/** A client-supplied message id (an idempotency key): the same alphabet as a session id. */
export const ClientMessageIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a message id is 1-128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit');

// ---- content ---------------------------------------------------------------------------------------------------

export const PromptTextBlockSchema = z.object({ type: z.literal('text'), text: z.string() }).strict();
/** An image as a client sends it: base64 data of a png, jpeg, webp or gif; `name` is accepted and not kept. */
export const PromptImageBlockSchema = z
  .object({
    type: z.literal('image'),
    mediaType: z.enum(['image/png', 'image/jpeg', 'image/webp', 'image/gif']),
    data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64 data'),
    name: z.string().max(256).optional(),
  })
  .strict();
export const PromptContentBlockSchema = z.discriminatedUnion('type', [PromptTextBlockSchema, PromptImageBlockSchema]);
export type PromptContentBlock = z.infer<typeof PromptContentBlockSchema>;

// ---- the envelope ----------------------------------------------------------------------------------------------

/** `POST /api/<method>` body. */
export const ClientRequestSchema = z
  .object({
    type: z.literal('client-request'),
    rpcId: z.string().min(1).max(200),
    method: z.string().min(1).max(100),
    payload: z.unknown(),
  })
  .strict();
export type ClientRequest = z.infer<typeof ClientRequestSchema>;

/** The rpcId a reply carries when the request's own rpcId could not be read. */
export const INVALID_REQUEST_RPC_ID = 'invalid-request';

/** Every error code a Host reply can carry. */
export const HOST_ERROR_CODES = [
  'bad-request',
  'invalid-time-zone',
  'session-not-found',
  'session-exists',
  'agent-busy',
  'model-unavailable',
  'attachment-error',
  'queue-item-not-found',
  'steer-unavailable',
  'idempotency-conflict',
  'invalid-fork-boundary',
  'internal',
] as const;
export const HostErrorCodeSchema = z.enum(HOST_ERROR_CODES);
export type HostErrorCode = z.infer<typeof HostErrorCodeSchema>;

export const HostErrorBodySchema = z.object({ code: HostErrorCodeSchema, message: z.string(), details: z.record(z.unknown()) }).strict();
export type HostErrorBody = z.infer<typeof HostErrorBodySchema>;

/** The reply body of every `POST /api/<method>` that reached the dispatcher. */
export const ServerResponseSchema = z
  .object({
    type: z.literal('server-response'),
    rpcId: z.string(),
    result: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true), value: z.unknown() }).strict(),
      z.object({ ok: z.literal(false), error: HostErrorBodySchema }).strict(),
    ]),
  })
  .strict();
export type ServerResponse = z.infer<typeof ServerResponseSchema>;

// ---- requests --------------------------------------------------------------------------------------------------

export const SessionCreateRequestSchema = z
  .object({ sessionId: HostSessionIdSchema.optional(), systemPrompt: z.string().max(100_000).optional() })
  .strict();
export const SessionListRequestSchema = z.object({}).strict();
export const SessionGetRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
export const SessionHistoryRequestSchema = z
  .object({
    sessionId: HostSessionIdSchema,
    /** Return events with seq strictly greater than this. @defaultValue -1 (from the start) */
    after: z.number().int().min(-1).optional(),
    /** @defaultValue 200 */
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
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
export const QueueActionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('edit'), content: z.array(PromptContentBlockSchema) }).strict(),
  z.object({ kind: z.literal('remove') }).strict(),
  z.object({ kind: z.literal('steer') }).strict(),
]);
export const SessionUpdateQueueRequestSchema = z
  .object({ sessionId: HostSessionIdSchema, itemId: z.string().min(1).max(200), action: QueueActionSchema })
  .strict();
export const SessionCancelRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
export const SessionWakeRequestSchema = z.object({ sessionId: HostSessionIdSchema }).strict();
export const SessionForkRequestSchema = z
  .object({
    sessionId: HostSessionIdSchema,
    /** Number of the parent's events the child inherits. @defaultValue all of them */
    boundary: z.number().int().min(1).optional(),
    newSessionId: HostSessionIdSchema.optional(),
  })
  .strict();

/** The request schema of every method, by name. */
export const HOST_REQUEST_SCHEMAS = {
  'session.create': SessionCreateRequestSchema,
  'session.list': SessionListRequestSchema,
  'session.get': SessionGetRequestSchema,
  'session.history': SessionHistoryRequestSchema,
  'session.prompt': SessionPromptRequestSchema,
  'session.updateQueue': SessionUpdateQueueRequestSchema,
  'session.cancel': SessionCancelRequestSchema,
  'session.wake': SessionWakeRequestSchema,
  'session.fork': SessionForkRequestSchema,
} as const;
export type HostMethod = keyof typeof HOST_REQUEST_SCHEMAS;
export const HOST_METHODS = Object.keys(HOST_REQUEST_SCHEMAS) as readonly HostMethod[];
export const isHostMethod = (m: string): m is HostMethod => Object.prototype.hasOwnProperty.call(HOST_REQUEST_SCHEMAS, m);
export type HostRequest<M extends HostMethod> = z.infer<(typeof HOST_REQUEST_SCHEMAS)[M]>;

// ---- results ---------------------------------------------------------------------------------------------------

const UnknownMessageSchema = z.object({ id: z.string(), role: z.literal('user'), content: z.array(z.unknown()), source: z.record(z.unknown()) }).passthrough();
/** A row of a queue snapshot: `claimed` marks a steering row already claimed whose `user/message` is not logged yet. */
export const QueueRowSchema = z
  .object({ id: z.string(), placement: z.enum(['queued', 'steering', 'context']), message: UnknownMessageSchema, claimed: z.literal(true).optional() })
  .strict();
export type QueueRow = z.infer<typeof QueueRowSchema>;

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
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

export const SessionCreateResultSchema = z.object({ sessionId: z.string() }).strict();
export const SessionListResultSchema = z.object({ sessions: z.array(SessionSummarySchema) }).strict();
export const SessionGetResultSchema = SessionSummarySchema.extend({
  /** seq of the last event in the log (live log when live here, else the store). */
  lastSeq: z.number().int(),
  lastTurn: z.number().int(),
  openTurn: z.number().int().nullable(),
  queue: z.array(QueueRowSchema),
}).strict();
export const HistoryEntrySchema = z
  .object({ event: z.object({ seq: z.number().int(), id: z.string(), time: z.number(), type: z.string(), data: z.unknown() }).passthrough(), class: z.enum(['prompt', 'steering', 'context']).optional() })
  .strict();
export const SessionHistoryResultSchema = z
  .object({ events: z.array(HistoryEntrySchema), lastSeq: z.number().int(), nextAfter: z.number().int().nullable() })
  .strict();
/** The prompt receipt: the message id and the seq of its admission splice; `duplicate` on an idempotent retry. */
export const PromptReceiptSchema = z
  .object({ accepted: z.literal(true), messageId: z.string(), seq: z.number().int(), durable: z.boolean(), duplicate: z.literal(true).optional() })
  .strict();
export type PromptReceipt = z.infer<typeof PromptReceiptSchema>;
export const AcceptedSchema = z.object({ accepted: z.literal(true) }).strict();
export const WakeResultSchema = z.object({ accepted: z.literal(true), woke: z.boolean() }).strict();
export const SessionForkResultSchema = z.object({ sessionId: z.string() }).strict();

/** The result schema of every method, by name. */
export const HOST_RESULT_SCHEMAS = {
  'session.create': SessionCreateResultSchema,
  'session.list': SessionListResultSchema,
  'session.get': SessionGetResultSchema,
  'session.history': SessionHistoryResultSchema,
  'session.prompt': PromptReceiptSchema,
  'session.updateQueue': AcceptedSchema,
  'session.cancel': AcceptedSchema,
  'session.wake': WakeResultSchema,
  'session.fork': SessionForkResultSchema,
} as const satisfies Record<HostMethod, z.ZodTypeAny>;
export type HostResult<M extends HostMethod> = z.infer<(typeof HOST_RESULT_SCHEMAS)[M]>;

// ---- live mirror frames ----------------------------------------------------------------------------------------

export const HostFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session/subscribed'), sessionId: z.string(), lastSeq: z.number().int() }).strict(),
  z
    .object({ type: z.literal('session/event'), sessionId: z.string(), event: z.object({ seq: z.number().int(), type: z.string() }).passthrough() })
    .strict(),
  z.object({ type: z.literal('session/queue'), sessionId: z.string(), seq: z.number().int(), items: z.array(QueueRowSchema) }).strict(),
  z.object({ type: z.literal('host/session-status'), sessionId: z.string(), running: z.boolean() }).strict(),
  z.object({ type: z.literal('host/session-added'), sessionId: z.string(), kind: z.string(), parentSessionId: z.string().optional() }).strict(),
  z.object({ type: z.literal('host/session-removed'), sessionId: z.string() }).strict(),
  z.object({ type: z.literal('stream/error'), error: z.object({ code: z.string(), message: z.string() }).strict() }).strict(),
]);
export type HostFrame = z.infer<typeof HostFrameSchema>;
