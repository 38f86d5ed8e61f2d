import { z } from 'zod';
import { wellFormedText } from './well-formed.js';

/**
 * The envelope of every Host call: the request a client posts, the response it gets back, and the stable error codes
 * a failed response carries.
 */

/** `POST /api/<method>` body. */
export const ClientRequestSchema = z
  .object({
    type: z.literal('client-request'),
    // recorded in a prompt's message source
    rpcId: wellFormedText(z.string().min(1).max(200)),
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
  'message-too-large',
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
  'durable-timeout',
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
