import { z } from 'zod';
import { QueueRowSchema } from './session-methods.js';

/** The frames of the live mirror (`GET /api/stream`). */

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
