import type { ActorOption } from '../provenance.js';
import type { MessageId } from '../../domain/brand.js';
import type { InterruptAuthority } from '../../domain/children/child-authorisation.js';
import type { ChildState } from '../../domain/children/child-state.js';
import type { SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import { createUserMessage, type ContentBlock } from '../../domain/message.js';
import type { Agent } from '../agent.js';
import { silentLogger } from '../logger.js';
import { randomIds } from '../ports/clock.js';
import { KeyedLock } from '../keyed-lock.js';
import { ActivationRegistry } from './activation-registry.js';
import { childAgentSetup } from './child-setup.js';
import type { ChildEntry, ChildrenOptions, DeliveryOptions, OneShotResult, StartChildSpec, StartedChild } from './child-options.js';
import { runOneShot, startContinuableChild } from './child-start.js';
import type { ChildrenPort } from './children-port.js';
import { deliverFollowup, interruptChild } from './delivery.js';
import { Disposal } from './disposal.js';
import { sendReport } from './report.js';

/**
 * Continuable and one-shot children (sub-agents). A continuable child is a durable session with its own Inbox and
 * at most one resident Activation at a time; this manager owns residency, ownership and admission, and a per-child
 * lock linearises every delivery, the settlement decision and disposal of that child. The rules themselves are the
 * pure functions of `domain/children` (authorisation, the descriptor fold, child state, the settlement account);
 * everything a child does is visible in the logs: `subagent/descriptor` in the child's, `subagent/start` and
 * `subagent/end` per epoch in the parent's.
 *
 * Its collaborators share one private port: starting (`child-start.ts`), delivery and interrupts (`delivery.ts`), the
 * report (`report.ts`), settlement and disposal (`disposal.ts`), the epoch edges in the parent's log (`epoch-edges.ts`).
 */
export class ChildManager {
  /** What the collaborators need from this manager. */
  readonly #port: ChildrenPort;
  readonly #disposal: Disposal;
  readonly #servesRoute: NonNullable<ChildrenOptions['servesRoute']>;
  #draining = false;

  constructor(options: ChildrenOptions) {
    const ids = options.ids ?? randomIds;
    const systemPrompt = options.systemPrompt ?? ((d) => d.persona);
    const route = options.route;
    this.#port = {
      runtime: options.runtime,
      ids,
      logger: options.logger ?? silentLogger,
      lock: new KeyedLock(),
      registry: new ActivationRegistry((childSessionId) => void this.#disposal.settle(childSessionId)),
      maxDepth: options.maxDepth ?? 4,
      reportDelivery: options.reportDelivery ?? 'next-step',
      draining: () => this.#draining,
      message: (content, source) => createUserMessage(content, source, { newId: () => ids.next() }),
      setupOf: (descriptor, childSessionId) => childAgentSetup(descriptor, childSessionId, systemPrompt, route),
      settle: (childSessionId) => this.#disposal.settle(childSessionId),
    };
    this.#disposal = new Disposal(this.#port);
    this.#servesRoute = options.servesRoute ?? (() => true);
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
    return deliverFollowup(this.#port, parent, childSessionId, content, options);
  }

  /**
   * Interrupts a resident child: `cancel(user|parent, {keepInbox: true})`. Claimed work is not requeued; queued
   * follow-ups park until the next waking delivery; the activation stays. An absent, settled, one-shot or disposing
   * target is an accepted no-op. Returns whether a cancel was issued; throws `subagent-unauthorized` otherwise.
   * `actor` is recorded on the stopped turn's `turn/end` (default: an ancestor's session, `parent-session`; none for a user).
   */
  interrupt(childSessionId: string, authority: InterruptAuthority, actor?: ActorOption): boolean {
    return interruptChild(this.#port, childSessionId, authority, actor);
  }

  /**
   * The explicit report of a continuable child to its live parent: `"Background subagent <id> reported:"` + output,
   * source `subagent-report`; steered (waking) or injected (quiet) as configured. Repeatable, never automatic.
   */
  report(child: Agent, output: string): MessageId {
    return sendReport(this.#port, child, output);
  }

  // ---- observing -----------------------------------------------------------------------------------------------

  /** Whether `agent` is the runtime's current live entry for its session id (not a stale, replaced object). */
  isLiveEntry(agent: Agent): boolean {
    return this.#port.runtime.liveAgent(agent.sessionId) === agent;
  }

  /** The live children of a session (`children`) or its whole live subtree (`descendants`). */
  list(parentSessionId: string, scope: 'children' | 'descendants' = 'children'): ChildEntry[] {
    return this.#port.registry.list(parentSessionId, scope);
  }

  /** Whether the child's activation is being disposed (deliveries wait for it, then cold-resume a new epoch). */
  isClosing(childSessionId: string): boolean {
    return Boolean(this.#port.registry.get(childSessionId)?.disposing);
  }

  /** Whether this deployment serves the model route a child's descriptor records (`ChildrenOptions.servesRoute`). */
  servesRoute(descriptor: SubagentDescriptorData): boolean {
    return this.#servesRoute(descriptor);
  }

  /** The derived state of a child (`absent` when it has no activation here). */
  state(childSessionId: string): ChildState {
    return this.#port.registry.state(childSessionId);
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
}
