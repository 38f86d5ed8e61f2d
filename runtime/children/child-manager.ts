import * as E from 'fp-ts/lib/Either.js';
import type { MessageId } from '../../domain/brand.js';
import { authoriseDelivery, authoriseInterrupt, type InterruptAuthority } from '../../domain/children/child-authorisation.js';
import { resumableDescriptor } from '../../domain/children/child-descriptor.js';
import { ChildError } from '../../domain/children/child-errors.js';
import type { ChildState } from '../../domain/children/child-state.js';
import { reportText } from '../../domain/children/settlement.js';
import type { SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import type { SessionCreatedData } from '../../domain/events.js';
import { createUserMessage, type ContentBlock, type MessageSource, type UserMessage } from '../../domain/message.js';
import type { Agent } from '../agent.js';
import { RuntimeError } from '../errors.js';
import { loadSession, type LoadedSession } from '../load-session.js';
import { silentLogger, type Logger } from '../logger.js';
import { randomIds, type IdSource } from '../ports/clock.js';
import type { Runtime } from '../runtime.js';
import type { Activation } from './activation.js';
import { KeyedLock } from './keyed-lock.js';
import { ActivationRegistry } from './activation-registry.js';
import { childAgentSetup, type ChildAgentSetup } from './child-setup.js';
import { cancelled, headerOf, type ChildrenPort } from './children-port.js';
import { Disposal } from './disposal.js';
import { activate } from './epoch-edges.js';
import { runOneShot, startContinuableChild } from './child-start.js';
import type { ChildEntry, ChildrenOptions, DeliveryOptions, OneShotResult, StartChildSpec, StartedChild } from './child-options.js';

/**
 * Continuable and one-shot children (sub-agents). A continuable child is a durable session with its own Inbox and
 * at most one resident Activation at a time; this manager owns residency, ownership and admission, and a per-child
 * lock linearises every delivery, the settlement decision and disposal of that child. The rules themselves are the
 * pure functions of `domain/children` (authorisation, the descriptor fold, child state, the settlement account);
 * everything a child does is visible in the logs: `subagent/descriptor` in the child's, `subagent/start` and
 * `subagent/end` per epoch in the parent's.
 */
export class ChildManager {
  readonly #runtime: Runtime;
  readonly #ids: IdSource;
  readonly #maxDepth: number;
  readonly #reportDelivery: 'next-step' | 'quiet';
  readonly #systemPrompt: NonNullable<ChildrenOptions['systemPrompt']>;
  readonly #route: ChildrenOptions['route'];
  readonly #servesRoute: NonNullable<ChildrenOptions['servesRoute']>;
  readonly #logger: Logger;
  readonly #lock = new KeyedLock();
  readonly #registry = new ActivationRegistry((childSessionId) => void this.#disposal.settle(childSessionId));
  /** What the collaborators need from this manager. */
  readonly #port: ChildrenPort;
  readonly #disposal: Disposal;
  #draining = false;

  constructor(options: ChildrenOptions) {
    this.#runtime = options.runtime;
    this.#ids = options.ids ?? randomIds;
    this.#maxDepth = options.maxDepth ?? 4;
    this.#reportDelivery = options.reportDelivery ?? 'next-step';
    this.#systemPrompt = options.systemPrompt ?? ((d) => d.persona);
    this.#route = options.route;
    this.#servesRoute = options.servesRoute ?? (() => true);
    this.#logger = options.logger ?? silentLogger;
    this.#port = {
      runtime: this.#runtime,
      ids: this.#ids,
      logger: this.#logger,
      lock: this.#lock,
      registry: this.#registry,
      maxDepth: this.#maxDepth,
      reportDelivery: this.#reportDelivery,
      draining: () => this.#draining,
      message: (content, source) => this.#message(content, source),
      setupOf: (descriptor, childSessionId) => this.#setupOf(descriptor, childSessionId),
      settle: (childSessionId) => this.#disposal.settle(childSessionId),
    };
    this.#disposal = new Disposal(this.#port);
  }

  // ---- starting ------------------------------------------------------------------------------------------------

  /**
   * Starts a continuable child of `parent` and submits its first prompt as a follow-up (source `user`). Resolves at
   * inbox acceptance — not at turn start or durability. Any failure before acceptance rolls everything back: no
   * activation, no ownership, and a `subagent/start` already logged is closed by `subagent/end {abnormal}`.
   */
  startContinuable(parent: Agent, spec: StartChildSpec): Promise<StartedChild> {
    return startContinuableChild(this.#port, parent, spec);
  }

  /**
   * Runs a one-shot child to its end and returns its single result. No activation, no follow-up, no cold resume,
   * no report, no interrupt; the parent's log still records `subagent/start` and `subagent/end`. Aborting `signal`
   * cancels the child with cause `parent`.
   */
  start(parent: Agent, spec: StartChildSpec): Promise<OneShotResult> {
    return runOneShot(this.#port, parent, spec);
  }

  // ---- delivering ----------------------------------------------------------------------------------------------

  /**
   * A parent-to-child follow-up (always next-turn: it never steers work already underway), under the child's lock:
   * a resident child is authorised and gets it; a child whose disposal began is waited for, then cold-resumed; an
   * absent child is inspected, authorised BEFORE its log is folded, resumed from its own descriptor, and gets it.
   * Resolves with the accepted message id. Refusals are `ChildError`s.
   */
  followup(parent: Agent, childSessionId: string, content: string | readonly ContentBlock[], options: DeliveryOptions = {}): Promise<MessageId> {
    const message = this.#message(content, options.source ?? { kind: 'user' });
    return this.#lock.run(childSessionId, async () => {
      if (this.#draining) throw new ChildError('subagent-delivery-unavailable', childSessionId, `the runtime is draining; ${childSessionId} takes no deliveries`);
      if (options.signal?.aborted) throw cancelled(childSessionId);
      let activation = this.#registry.get(childSessionId);
      if (activation?.disposing) {
        await activation.disposing;
        activation = this.#registry.get(childSessionId);
      }
      if (options.signal?.aborted) throw cancelled(childSessionId);
      if (!activation) activation = await this.#coldResume(parent, childSessionId);
      if (options.signal?.aborted) {
        // resumed, then cancelled before acceptance: nothing was delivered; the empty epoch settles as usual
        queueMicrotask(() => void this.#disposal.settle(childSessionId));
        throw cancelled(childSessionId);
      }
      // the final authorisation, with no await between it and the send
      this.#authorise(parent, childSessionId, headerOf(activation.agent.events));
      this.#registry.accept(activation, message.id);
      activation.agent.followup(message);
      return message.id;
    });
  }

  /**
   * Interrupts a resident child: `cancel(user|parent, {keepInbox: true})`. Claimed work is not requeued; queued
   * follow-ups park until the next waking delivery; the activation stays. An absent, settled, one-shot or disposing
   * target is an accepted no-op. Returns whether a cancel was issued; throws `subagent-unauthorized` otherwise.
   */
  interrupt(childSessionId: string, authority: InterruptAuthority): boolean {
    const activation = this.#registry.get(childSessionId);
    const target = activation && !activation.disposing ? { childSessionId, parentSession: activation.parentSessionId, ancestry: activation.ancestry } : null;
    const decided = authoriseInterrupt(authority, childSessionId, target);
    if (E.isLeft(decided)) throw decided.left;
    if (!decided.right || !activation) return false;
    activation.agent.cancel({ kind: authority.kind === 'user' ? 'user' : 'parent' }, { keepInbox: true });
    return true;
  }

  /**
   * The explicit report of a continuable child to its live parent: `"Background subagent <id> reported:"` + output,
   * source `subagent-report`; steered (waking) or injected (quiet) as configured. Repeatable, never automatic.
   */
  report(child: Agent, output: string): MessageId {
    const activation = this.#registry.get(child.sessionId);
    if (!activation || activation.agent !== child) {
      throw new ChildError('subagent-unauthorized', child.sessionId, `session ${child.sessionId} is not a resident continuable child`);
    }
    if (activation.disposing) throw new ChildError('subagent-activation-closing', child.sessionId, `child ${child.sessionId} is closing; the report was not delivered`);
    const parent = this.#runtime.liveAgent(activation.parentSessionId);
    if (!parent) {
      throw new ChildError('subagent-parent-unavailable', child.sessionId, 'the direct parent is not live; the report was not delivered');
    }
    const message = this.#message(reportText(child.sessionId, output), { kind: 'subagent-report', form: 'relay', senderSessionId: child.sessionId });
    // provenance: the report is caused by the child session (its latest event), named by its stream
    const last = child.events.at(-1);
    const metadata = { ...(last ? { causationId: last.id } : {}), causationStream: child.sessionId };
    if (this.#reportDelivery === 'quiet') return parent.inject(message, { metadata });
    this.#registry.acceptFor(parent, message.id);
    return parent.steer(message, { metadata });
  }

  // ---- observing -----------------------------------------------------------------------------------------------

  /** Whether `agent` is the runtime's current live entry for its session id (not a stale, replaced object). */
  isLiveEntry(agent: Agent): boolean {
    return this.#runtime.liveAgent(agent.sessionId) === agent;
  }

  /** The live children of a session (`children`) or its whole live subtree (`descendants`). */
  list(parentSessionId: string, scope: 'children' | 'descendants' = 'children'): ChildEntry[] {
    return this.#registry.list(parentSessionId, scope);
  }

  /** Whether the child's activation is being disposed (deliveries wait for it, then cold-resume a new epoch). */
  isClosing(childSessionId: string): boolean {
    return Boolean(this.#registry.get(childSessionId)?.disposing);
  }

  /** Whether this deployment serves the model route a child's descriptor records (`ChildrenOptions.servesRoute`). */
  servesRoute(descriptor: SubagentDescriptorData): boolean {
    return this.#servesRoute(descriptor);
  }

  /** The derived state of a child (`absent` when it has no activation here). */
  state(childSessionId: string): ChildState {
    return this.#registry.state(childSessionId);
  }

  // ---- closing -------------------------------------------------------------------------------------------------

  /**
   * Closes a session's lineage: every child it owns is disposed (children first, each with its settlement injected
   * into its closing parent without waking), then the session's own agent is disposed, which clears those notices.
   */
  closeLineage(agent: Agent): Promise<void> {
    return this.#disposal.closeLineage(agent);
  }

  /** Stops admission (deliveries and starts refuse with `subagent-delivery-unavailable`) and disposes every activation. */
  drain(): Promise<void> {
    this.#draining = true;
    return this.#disposal.closeAll();
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  #setupOf(descriptor: SubagentDescriptorData, childSessionId: string): ChildAgentSetup {
    return childAgentSetup(descriptor, childSessionId, this.#systemPrompt, this.#route);
  }

  #message(content: string | readonly ContentBlock[], source: MessageSource): UserMessage {
    return createUserMessage(content, source, { newId: () => this.#ids.next() });
  }

  #authorise(parent: Agent, childSessionId: string, header: SessionCreatedData): void {
    const decided = authoriseDelivery({ sessionId: parent.sessionId, isLiveEntry: this.#runtime.liveAgent(parent.sessionId) === parent }, childSessionId, header);
    if (E.isLeft(decided)) throw decided.left;
  }

  /** Cold resume of an absent child: inspect, authorise before folding, fold its own descriptor, resume, activate. */
  async #coldResume(parent: Agent, childSessionId: string): Promise<Activation> {
    let loaded: LoadedSession;
    try {
      loaded = await loadSession(this.#runtime.store, childSessionId, this.#runtime.keyStore);
    } catch (e) {
      throw new ChildError('subagent-not-resumable', childSessionId, `child ${childSessionId} cannot be inspected (${e instanceof RuntimeError ? e.code : 'store error'}); do not retry with this id`);
    }
    if (this.#draining) throw new ChildError('subagent-delivery-unavailable', childSessionId, `the runtime is draining; ${childSessionId} takes no deliveries`);
    const header = headerOf(loaded.events);
    this.#authorise(parent, childSessionId, header);
    const descriptor = resumableDescriptor(childSessionId, header, loaded.events);
    if (E.isLeft(descriptor)) throw descriptor.left;
    const agent = await this.#runtime.resume(childSessionId, this.#setupOf(descriptor.right, childSessionId));
    const epoch = parent.events.filter((e) => e.type === 'subagent/start' && (e.data as { childSessionId: string }).childSessionId === childSessionId).length + 1;
    return activate(this.#port, parent, agent, epoch, loaded.events.length, descriptor.right.label);
  }
}
