import { childCatalogDiagnostic } from '../domain/children/child-catalog.js';
import { foldChildDescriptor } from '../domain/children/child-descriptor.js';
import { isChildError } from '../domain/children/child-errors.js';
import type { LogEvent, SessionCreatedData } from '../domain/events.js';
import type { Agent } from '../runtime/agent.js';
import type { ChildManager } from '../runtime/children/child-manager.js';
import type { Logger } from '../runtime/logger.js';
import { principalActor, promptSource } from './actor.js';
import { checkImages, type ImagePolicy } from './prompt.js';
import { isMessageTooLargeError } from '../runtime/errors.js';
import type { CatalogEntry } from './catalog.js';
import { HostError } from './errors.js';
import type { CallContext } from './host-types.js';
import { toContentBlocks } from './prompt.js';
import type { HostRequest, HostResult } from './schemas.js';
import { historyPage } from './session-reads.js';
import { requestTimeZone } from './time-zone.js';

/** What the subagent routes need of the host: its children, its live agents and its session catalog. */
export interface SubagentRouteDeps {
  /** The runtime's continuable children; absent when the host serves no children (then no session has any). */
  readonly children: ChildManager | undefined;
  /** The host's image policy: a follow-up's images meet the same limits as a prompt's. */
  readonly images: ImagePolicy;
  /** The parent's live agent on this host, or undefined. */
  readonly liveAgent: (sessionId: string) => Agent | undefined;
  /** The catalog entry of a session, after reading what the store committed since the last look. */
  readonly catalogEntry: (sessionId: string) => Promise<CatalogEntry | undefined>;
  /** A session's log: its live events when an agent of the runtime holds it, else the store's (read only). */
  readonly sessionEvents: (sessionId: string) => Promise<readonly LogEvent[]>;
  readonly logger: Logger;
}

/**
 * `subagent.prompt`: a user follow-up to a continuable direct child of a live parent. Checked in this order: the
 * time zone, the parent is live here, the catalog check (the child is a continuable child of that parent, resident
 * now or so recorded in the store; a stored row whose log contradicts itself or whose model route is not served is a
 * diagnostic; the caller's signal aborting meanwhile is `cancelled`), the images (as `session.prompt`'s: the model
 * takes them, none over the image limit), then the children's own delivery rules (the
 * signal owns the delivery until the child's inbox accepts it); answers the message id the child's inbox accepted.
 */
export const subagentPrompt = async (deps: SubagentRouteDeps, request: HostRequest<'subagent.prompt'>, ctx: CallContext): Promise<HostResult<'subagent.prompt'>> => {
  const { parentSessionId, childSessionId } = request;
  const timeZone = requestTimeZone(request.clientTimeZone);
  const parent = deps.liveAgent(parentSessionId);
  if (!parent) throw new HostError('subagent-parent-unavailable', `parent session ${parentSessionId} is not live on this host`, { parentSessionId });
  const children = deps.children;
  const notFound = () => new HostError('subagent-not-found', `${childSessionId} is not a continuable child of ${parentSessionId}`, { parentSessionId, childSessionId });
  if (!children) throw notFound();
  const resident = children.list(parentSessionId).some((e) => e.childSessionId === childSessionId && e.mode === 'continuable');
  if (!resident) await abortable(catalogCheck(deps, children, parentSessionId, childSessionId, notFound), ctx.signal);
  checkImages(request.content, deps.images);
  try {
    const source = promptSource(ctx.rpcId, ctx.principal, timeZone);
    const messageId = await children.followup(parent, childSessionId, toContentBlocks(request.content), {
      source,
      actor: principalActor(ctx.principal),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    return { messageId };
  } catch (e) {
    throw childRefusal(deps, e, childSessionId, parentSessionId);
  }
};

/** The catalog check of a stored child: a continuable child of the parent, and not a diagnostic row. */
const catalogCheck = async (deps: SubagentRouteDeps, children: ChildManager, parentSessionId: string, childSessionId: string, notFound: () => HostError): Promise<void> => {
  const entry = await deps.catalogEntry(childSessionId);
  if (!entry || entry.kind !== 'continuable' || entry.parentSession !== parentSessionId) throw notFound();
  // the header names this parent (lineage first); only now is the rest of the child's log read
  let events: readonly LogEvent[];
  try {
    events = await deps.sessionEvents(childSessionId);
  } catch {
    return; // unreadable: the delivery's own inspection answers it (subagent-not-resumable)
  }
  const header = events[0]!.data as SessionCreatedData;
  const reason = childCatalogDiagnostic(header, foldChildDescriptor(header, events), (d) => children.servesRoute(d));
  if (reason !== null) {
    throw new HostError('subagent-catalog-diagnostic', `child ${childSessionId} cannot take a follow-up here (${reason})`, { parentSessionId, childSessionId, reason });
  }
};

/** `work`, unless `signal` aborts first (then `cancelled`). */
const abortable = <T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(cancelledError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
};

const cancelledError = () => new HostError('cancelled', 'the request was cancelled before the child accepted a message', {});

/**
 * `subagent.history`: a page of a direct child's durable events (either mode), classified like `session.history`,
 * with what the child is (mode, label, state here) and whether its parent is live here. It needs no live parent
 * (a user reads a child whose parent is offline) and never resumes anything; a session that is not a direct child
 * of the named parent is `subagent-not-found`.
 */
export const subagentHistory = async (deps: SubagentRouteDeps, request: HostRequest<'subagent.history'>): Promise<HostResult<'subagent.history'>> => {
  const { parentSessionId, childSessionId } = request;
  const entry = await deps.catalogEntry(childSessionId);
  if (!entry || (entry.kind !== 'continuable' && entry.kind !== 'one-shot') || entry.parentSession !== parentSessionId) {
    throw new HostError('subagent-not-found', `${childSessionId} is not a child of ${parentSessionId}`, { parentSessionId, childSessionId });
  }
  const events = await deps.sessionEvents(childSessionId);
  const header = events[0]!.data as SessionCreatedData;
  const descriptor = foldChildDescriptor(header, events);
  const page = historyPage(events, request);
  return {
    child: {
      childSessionId,
      parentSessionId,
      mode: entry.kind,
      label: descriptor?.label ?? '',
      state: deps.children?.state(childSessionId) ?? 'absent',
    },
    parentAvailable: deps.liveAgent(parentSessionId) !== undefined,
    ...page,
  };
};

/**
 * `subagent.interrupt`: cancels the child's current work if it is resident here; an absent, settled or closing
 * child is an accepted no-op. No parent, catalog or store lookup, so it works with the parent offline.
 */
export const subagentInterrupt = (deps: SubagentRouteDeps, request: HostRequest<'subagent.interrupt'>, ctx: CallContext): HostResult<'subagent.interrupt'> => {
  if (!deps.children) return { accepted: true };
  try {
    deps.children.interrupt(request.childSessionId, { kind: 'user', parentSessionId: request.parentSessionId }, principalActor(ctx.principal));
  } catch (e) {
    throw childRefusal(deps, e, request.childSessionId, request.parentSessionId);
  }
  return { accepted: true };
};

/** `subagent.list`: the parent's live children here, and whether the parent itself is live here (a hint only). */
export const subagentList = (deps: SubagentRouteDeps, request: HostRequest<'subagent.list'>): HostResult<'subagent.list'> => ({
  entries: (deps.children?.list(request.parentSessionId) ?? []).map((e) => ({ ...e })),
  parentAvailable: deps.liveAgent(request.parentSessionId) !== undefined,
});

/** A children refusal (or a follow-up over the event limit) as the host answers it; anything else is logged and answered `internal` (no backend text). */
const childRefusal = (deps: SubagentRouteDeps, e: unknown, childSessionId: string, parentSessionId: string): HostError => {
  if (isChildError(e)) {
    switch (e.code) {
      case 'subagent-not-resumable':
        return new HostError('subagent-not-resumable', `child ${childSessionId} cannot be resumed`, { childSessionId });
      case 'subagent-unauthorized':
        return new HostError('subagent-unauthorized', `child ${childSessionId} belongs to another parent session`, { childSessionId });
      case 'subagent-parent-unavailable':
        return new HostError('subagent-parent-unavailable', `parent session ${parentSessionId} is not live on this host`, { parentSessionId });
      case 'subagent-activation-closing':
      case 'subagent-delivery-unavailable':
        return new HostError('subagent-delivery-unavailable', `child ${childSessionId} takes no delivery now`, { childSessionId });
      case 'subagent-cancelled':
        return cancelledError();
      case 'subagent-depth-exceeded':
      case 'subagent-duplicate-child':
        break;
      default: {
        const never: never = e.code;
        void never;
      }
    }
  }
  // the follow-up is larger than the store's event limit: the client's to shorten, never to retry as `internal`
  if (isMessageTooLargeError(e)) return new HostError('message-too-large', `follow-up to ${childSessionId}: ${e.message}`, { limit: e.limit, size: e.size });
  deps.logger.warn(`subagent delivery to ${childSessionId} failed`, e);
  return new HostError('internal', `delivery to ${childSessionId} failed`, {});
};
