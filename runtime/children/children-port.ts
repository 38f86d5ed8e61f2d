import { ChildError } from '../../domain/children/child-errors.js';
import type { SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import type { SessionCreatedData } from '../../domain/events.js';
import type { ContentBlock, MessageSource, UserMessage } from '../../domain/message.js';
import type { LoadedSession } from '../load-session.js';
import type { Logger } from '../logger.js';
import type { IdSource } from '../ports/clock.js';
import type { Runtime } from '../runtime.js';
import type { ActivationRegistry } from './activation-registry.js';
import type { ChildAgentSetup } from './child-setup.js';
import type { KeyedLock } from '../keyed-lock.js';

/**
 * What the children manager's collaborators (starting, delivery, report, disposal) need from it: the runtime, the
 * per-child lock, the registry of activations, and the manager's options as the operations they are used for.
 */
export interface ChildrenPort {
  readonly runtime: Runtime;
  readonly ids: IdSource;
  readonly logger: Logger;
  /** Linearises every delivery, the settlement decision and disposal of one child. */
  readonly lock: KeyedLock;
  readonly registry: ActivationRegistry;
  /** The deepest delegation allowed. */
  readonly maxDepth: number;
  /** How an explicit report reaches the parent. */
  readonly reportDelivery: 'next-step' | 'quiet';
  /** Whether admission has stopped (`drain`); read at every check. */
  readonly draining: () => boolean;
  /** A user message with an id from `ids`. */
  readonly message: (content: string | readonly ContentBlock[], source: MessageSource) => UserMessage;
  /** A child's agent setup from its descriptor, at start and at every cold resume. */
  readonly setupOf: (descriptor: SubagentDescriptorData, childSessionId: string) => ChildAgentSetup;
  /** The settlement decision, under the child's lock (a quiet, childless activation is disposed). */
  readonly settle: (childSessionId: string) => Promise<void>;
}

/** The refusal of a start or delivery whose signal aborted before acceptance. */
export const cancelled = (childSessionId: string): ChildError =>
  new ChildError('subagent-cancelled', childSessionId, `delivery to ${childSessionId} was cancelled before acceptance`);

/** The header of a session's log (its first event). */
export const headerOf = (events: LoadedSession['events']): SessionCreatedData => events[0]!.data as SessionCreatedData;
