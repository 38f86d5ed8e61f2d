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

/** The schema of a text block of a prompt. */
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
/** The schema of a prompt's content blocks (text or image, discriminated by `type`). */
export const PromptContentBlockSchema = z.discriminatedUnion('type', [PromptTextBlockSchema, PromptImageBlockSchema]);
/** A content block of a prompt over the wire: text or an image. */
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
/** One request envelope as a client sends it: `{type: "client-request", rpcId, method, payload}`. */
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
  'subagent-parent-unavailable',
  'subagent-not-found',
  'subagent-not-resumable',
  'subagent-unauthorized',
  'subagent-delivery-unavailable',
  'subagent-catalog-diagnostic',
  'cancelled',
  'internal',
] as const;
/** The schema of the host API's error codes. */
export const HostErrorCodeSchema = z.enum(HOST_ERROR_CODES);
/** A stable error code of the host API (see docs/host.md for each). */
export type HostErrorCode = z.infer<typeof HostErrorCodeSchema>;

/** The schema of a failed response's `error` body. */
export const HostErrorBodySchema = z.object({ code: HostErrorCodeSchema, message: z.string(), details: z.record(z.unknown()) }).strict();
/** The `error` of a failed response: a stable `code`, a one-line `message` and typed `details`. */
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
/** One response envelope: `{type: "server-response", rpcId, ok, result | error}`. */
export type ServerResponse = z.infer<typeof ServerResponseSchema>;

// ---- requests --------------------------------------------------------------------------------------------------

/** The payload of `session.create`. */
export const SessionCreateRequestSchema = z
  .object({ sessionId: HostSessionIdSchema.optional(), systemPrompt: z.string().max(100_000).optional() })
  .strict();
/** The payload of `session.list` (empty). */
export const SessionListRequestSchema = z.object({}).strict();
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
  'subagent.prompt': SubagentPromptRequestSchema,
  'subagent.interrupt': SubagentInterruptRequestSchema,
  'subagent.list': SubagentListRequestSchema,
  'subagent.history': SubagentHistoryRequestSchema,
} as const;
/** A method name of the host API. */
export type HostMethod = keyof typeof HOST_REQUEST_SCHEMAS;
/** Every method name the host answers, in `POST /api/<method>` order of declaration. */
export const HOST_METHODS = Object.keys(HOST_REQUEST_SCHEMAS) as readonly HostMethod[];
/** Whether a string names a method of the host API. */
export const isHostMethod = (m: string): m is HostMethod => Object.prototype.hasOwnProperty.call(HOST_REQUEST_SCHEMAS, m);
/** The payload of a request to method `M`, as its schema parses it. */
export type HostRequest<M extends HostMethod> = z.infer<(typeof HOST_REQUEST_SCHEMAS)[M]>;

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
/** The result of `session.list`: a summary per session. */
export const SessionListResultSchema = z.object({ sessions: z.array(SessionSummarySchema) }).strict();
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
  'subagent.prompt': SubagentPromptResultSchema,
  'subagent.interrupt': AcceptedSchema,
  'subagent.list': SubagentListResultSchema,
  'subagent.history': SubagentHistoryResultSchema,
} as const satisfies Record<HostMethod, z.ZodTypeAny>;
/** The result of a successful request to method `M`. */
export type HostResult<M extends HostMethod> = z.infer<(typeof HOST_RESULT_SCHEMAS)[M]>;

// ---- live mirror frames ----------------------------------------------------------------------------------------

/** The schema of every live-mirror frame, discriminated by `type`. */
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
/** One frame of the live mirror (`GET /api/stream`), as a client receives it. */
export type HostFrame = z.infer<typeof HostFrameSchema>;
