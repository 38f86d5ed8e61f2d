import type { z } from 'zod';
import {
  SessionCreateRequestSchema,
  SessionListRequestSchema,
  SessionGetRequestSchema,
  SessionHistoryRequestSchema,
  SessionPromptRequestSchema,
  SessionUpdateQueueRequestSchema,
  SessionCancelRequestSchema,
  SessionWakeRequestSchema,
  SessionForkRequestSchema,
  SessionCreateResultSchema,
  SessionListResultSchema,
  SessionGetResultSchema,
  SessionHistoryResultSchema,
  PromptReceiptSchema,
  AcceptedSchema,
  WakeResultSchema,
  SessionForkResultSchema,
} from './schemas/session-methods.js';
import {
  SubagentPromptRequestSchema,
  SubagentInterruptRequestSchema,
  SubagentListRequestSchema,
  SubagentHistoryRequestSchema,
  SubagentPromptResultSchema,
  SubagentListResultSchema,
  SubagentHistoryResultSchema,
} from './schemas/subagent-methods.js';

/**
 * The Host's wire contract: every request payload, result and live-mirror frame as a zod schema. Pure zod (no
 * Node import), so a browser bundle can import this file to type and validate what it sends and receives.
 *
 * This module holds the method catalogue (the request and result schema of every method, by name); the schemas live
 * by responsibility in host/schemas/ (ids, prompt content, the envelope and its errors, the `session.*` and
 * `subagent.*` methods, the mirror's frames) and are re-exported from here.
 */
export * from './schemas/identities.js';
export * from './schemas/prompt-content.js';
export * from './schemas/envelope.js';
export * from './schemas/session-methods.js';
export * from './schemas/subagent-methods.js';
export * from './schemas/frames.js';
export * from './schemas/fast-requests.js';

// ---- the method catalogue --------------------------------------------------------------------------------------

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
