import type { InboxSplicedData, InboxTarget, LogEvent } from '../domain/events.js';
import { isDuplicatePendingIdError } from '../domain/errors.js';
import type { Agent } from '../runtime/agent.js';
import { isMessageTooLargeError, isRuntimeError } from '../runtime/errors.js';
import type { Logger } from '../runtime/logger.js';
import { principalActor, promptSource } from './actor.js';
import { HostError } from './errors.js';
import type { CallContext, HostOptions } from './host-types.js';
import type { LiveSession } from './live-session.js';
import { DEFAULT_DURABLE_TIMEOUT_MS, waitDurable } from './durable-wait.js';
import { checkImages, promptMessage, sameContent, toContentBlocks } from './prompt.js';
import { ClientMessageIdSchema, type HostRequest, type HostResult } from './schemas.js';
import { requestTimeZone } from './time-zone.js';

/** What `session.prompt` needs of the host: its model and image options, its logger, the child refusal, resolution and ids. */
export interface PromptPort {
  readonly options: Pick<HostOptions, 'modelUnavailable' | 'modelAcceptsImages' | 'durableTimeoutMs' | 'admissionGate'> & { readonly maxImageBytes: number };
  readonly logger: Logger;
  /** The session when it is live on this host and no child (what `refuseChild` lets through and `resolve` answers at once), else undefined. */
  readonly liveOrdinary: (sessionId: string) => LiveSession | undefined;
  /** Refuses a child session `agent-busy {reason: 'subagent-owned'}`. */
  readonly refuseChild: (sessionId: string) => Promise<void>;
  /** The live session, resumed on demand (concurrent callers for one id share one resume). */
  readonly resolve: (sessionId: string) => Promise<LiveSession>;
  /** A message id for a prompt without a client-supplied one. */
  readonly newId: () => string;
}

/** Makes the log durable up to and including the admission at `seq`, within the host's bound (`waitDurable`). */
const durable = (port: PromptPort, agent: Agent, seq: number, messageId: string): Promise<void> =>
  waitDurable(agent, seq, messageId, port.options.durableTimeoutMs ?? DEFAULT_DURABLE_TIMEOUT_MS, port.logger);

/**
 * What a refused admission answers: a pending duplicate is `idempotency-conflict`, a message larger than the store's
 * event limit `message-too-large {limit, size}`; a session this host can no longer write (fenced by another host,
 * closed) `internal`, to retry; anything else is a bug, rethrown for the host to log and answer `internal`. Never
 * `agent-busy`: that code names an owner, and a client that retries on it would retry forever.
 */
export const admissionRefusal = (e: unknown, messageId: string): unknown => {
  if (isDuplicatePendingIdError(e)) return new HostError('idempotency-conflict', `message ${messageId} is pending already`, { messageId });
  if (isMessageTooLargeError(e)) return new HostError('message-too-large', `message ${messageId}: ${e.message}`, { limit: e.limit, size: e.size });
  if (isRuntimeError(e) && (e.code === 'session-fenced' || e.code === 'session-closed')) return new HostError('internal', `message ${messageId} was not admitted: ${e.message}; retry`, {});
  return e;
};

/** The splice at or after `from` (an index into the agent's held events) that inserted `messageId` (looked up in place). */
const admittingSplice = (agent: Agent, from: number, messageId: string): LogEvent => {
  const events = agent.events;
  for (let i = from; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === 'agent/inbox/spliced' && (e.data as InboxSplicedData).inserted.some((m) => m.id === messageId)) return e;
  }
  throw new Error(`no splice admitted ${messageId}`);
};

/**
 * `session.prompt` (docs/host.md, the order of checks): the time zone and the idempotency key, the session (a child
 * is refused, a cold one resumed), the model, the images, an idempotent retry (answered from the log), then the
 * admission; a `durable` request waits for the store. Answers the receipt.
 */
export const sessionPrompt = async (port: PromptPort, request: HostRequest<'session.prompt'>, ctx: CallContext): Promise<HostResult<'session.prompt'>> => {
  // 1. the time zone, before the session is looked up
  const timeZone = requestTimeZone(request.clientTimeZone);
  if (ctx.idempotencyKey !== undefined && !ClientMessageIdSchema.safeParse(ctx.idempotencyKey).success) {
    throw new HostError('bad-request', 'invalid Idempotency-Key header', { issues: [{ path: ['Idempotency-Key'], message: 'not a valid message id' }] });
  }
  if (request.messageId !== undefined && ctx.idempotencyKey !== undefined && request.messageId !== ctx.idempotencyKey) {
    throw new HostError('bad-request', 'messageId and the Idempotency-Key header differ', { issues: [{ path: ['messageId'], message: 'differs from Idempotency-Key' }] });
  }
  // the prompt's slice of the event loop (HostOptions.admissionGate): what follows runs when the gate releases it
  if (port.options.admissionGate) await port.options.admissionGate.next();
  // 2. the Agent (resumed on demand, once per id); a child session is its parent's
  // (a session live here and no child: taken as it is, with nothing to await)
  let session = port.liveOrdinary(request.sessionId);
  if (session === undefined) {
    await port.refuseChild(request.sessionId);
    session = await port.resolve(request.sessionId);
  }
  // 3. the model
  const unavailable = port.options.modelUnavailable?.() ?? null;
  if (unavailable) throw new HostError('model-unavailable', `model ${unavailable.provider}/${unavailable.model} is unavailable`, { ...unavailable });
  // 4. images
  checkImages(request.content, { acceptsImages: port.options.modelAcceptsImages ?? true, maxImageBytes: port.options.maxImageBytes });
  const content = toContentBlocks(request.content);
  const agent = session.agent;
  // 5. an idempotent retry: the id was admitted to this session before (the log says so)
  const key = request.messageId ?? ctx.idempotencyKey;
  if (key !== undefined) {
    const known = session.knownAdmission(key);
    const admitted = known !== null ? known : await session.admission(key);
    if (admitted) {
      if (!sameContent(admitted.message.content, content)) {
        throw new HostError('idempotency-conflict', `message ${key} was admitted with other content`, { messageId: key, seq: admitted.seq });
      }
      if (request.durable) await durable(port, agent, admitted.seq, key);
      return { accepted: true, messageId: key, seq: admitted.seq, durable: request.durable ?? false, duplicate: true };
    }
  }
  // 6. admit: queue → followup (next-turn), steer → next-step; both wake
  const message = promptMessage(key ?? port.newId(), content, promptSource(ctx.rpcId, ctx.principal, timeZone));
  const target: InboxTarget = request.mode === 'steer' ? 'next-step' : 'next-turn';
  const before = agent.events.length;
  try {
    agent.send(message, target, true, { actor: principalActor(ctx.principal) });
  } catch (e) {
    throw admissionRefusal(e, message.id);
  }
  const splice = admittingSplice(agent, before, message.id);
  if (request.durable) await durable(port, agent, splice.seq, message.id);
  return { accepted: true, messageId: message.id, seq: splice.seq, durable: request.durable ?? false };
};
