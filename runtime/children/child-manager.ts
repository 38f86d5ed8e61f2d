import * as E from 'fp-ts/lib/Either.js';
import type { MessageId } from '../../domain/brand.js';
import { authoriseDelivery, authoriseInterrupt, type InterruptAuthority } from '../../domain/children/child-authorisation.js';
import { resumableDescriptor } from '../../domain/children/child-descriptor.js';
import { ChildError } from '../../domain/children/child-errors.js';
import type { ChildState } from '../../domain/children/child-state.js';
import { reportText, settlementDelivery, settlementOf } from '../../domain/children/settlement.js';
import type { ChildMode, SubagentDescriptorData } from '../../domain/children/subagent-events.js';
import type { SessionCreatedData } from '../../domain/events.js';
import { InvalidMessageError } from '../../domain/errors.js';
import { createUserMessage, parseContent, type ContentBlock, type MessageSource, type UserMessage } from '../../domain/message.js';
import type { Agent } from '../agent.js';
import { RuntimeError } from '../errors.js';
import { loadSession, type LoadedSession } from '../load-session.js';
import { silentLogger, type Logger } from '../logger.js';
import { randomIds, type IdSource } from '../ports/clock.js';
import type { Runtime } from '../runtime.js';
import type { Activation } from './activation.js';
import { KeyedLock } from './keyed-lock.js';
import { ActivationRegistry } from './activation-registry.js';
import { childAgentSetup, descriptorOf, type ChildAgentSetup } from './child-setup.js';
import type { ChildEntry, ChildrenOptions, DeliveryOptions, OneShotResult, StartChildSpec, StartedChild } from './child-options.js';

const cancelled = (childSessionId: string) => new ChildError('subagent-cancelled', childSessionId, `delivery to ${childSessionId} was cancelled before acceptance`);
const headerOf = (events: LoadedSession['events']): SessionCreatedData => events[0]!.data as SessionCreatedData;

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
  readonly #registry = new ActivationRegistry((childSessionId) => void this.#maybeSettle(childSessionId));
  /** Sessions whose lineage is closing: settlements to them are injected, never waking. */
  readonly #closing = new Set<string>();
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
  }

  // ---- starting ------------------------------------------------------------------------------------------------

  /**
   * Starts a continuable child of `parent` and submits its first prompt as a follow-up (source `user`). Resolves at
   * inbox acceptance — not at turn start or durability. Any failure before acceptance rolls everything back: no
   * activation, no ownership, and a `subagent/start` already logged is closed by `subagent/end {abnormal}`.
   */
  async startContinuable(parent: Agent, spec: StartChildSpec): Promise<StartedChild> {
    const { childSessionId, depth, descriptor } = await this.#admitStart(parent, spec, 'continuable');
    const message = this.#message(spec.content, { kind: 'user' });
    return this.#lock.run(childSessionId, async () => {
      let child: Agent | undefined;
      let activation: Activation | undefined;
      if (spec.signal?.aborted) throw cancelled(childSessionId);
      try {
        child = this.#runtime.createSession({
          sessionId: childSessionId,
          kind: 'continuable',
          parentSession: parent.sessionId,
          origin: 'subagent',
          delegationDepth: depth,
          ...this.#setupOf(descriptor, childSessionId),
        });
        child.recordChildEvent('subagent/descriptor', descriptor);
        activation = this.#activate(parent, child, 1, 0, descriptor.label);
        if (spec.signal?.aborted) throw cancelled(childSessionId);
        this.#registry.accept(activation, message.id);
        child.followup(message);
        return { childSessionId, messageId: message.id };
      } catch (e) {
        if (activation) this.#rollback(parent, activation);
        await child?.dispose().catch((d) => this.#logger.warn(`child ${childSessionId}: dispose after a failed start`, d));
        throw e;
      }
    });
  }

  /**
   * Runs a one-shot child to its end and returns its single result. No activation, no follow-up, no cold resume,
   * no report, no interrupt; the parent's log still records `subagent/start` and `subagent/end`. Aborting `signal`
   * cancels the child with cause `parent`.
   */
  async start(parent: Agent, spec: StartChildSpec): Promise<OneShotResult> {
    const { childSessionId, depth, descriptor } = await this.#admitStart(parent, spec, 'one-shot');
    const message = this.#message(spec.content, { kind: 'user' });
    const child = this.#runtime.createSession({
      sessionId: childSessionId,
      kind: 'one-shot',
      parentSession: parent.sessionId,
      origin: 'subagent',
      delegationDepth: depth,
      ...this.#setupOf(descriptor, childSessionId),
    });
    const runId = this.#ids.next();
    child.recordChildEvent('subagent/descriptor', descriptor);
    parent.recordChildEvent('subagent/start', { runId, childSessionId, mode: 'one-shot', epoch: 1 });
    const onAbort = () => child.cancel({ kind: 'parent' });
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (spec.signal?.aborted) onAbort();
      else child.followup(message);
      await child.whenIdle();
    } finally {
      spec.signal?.removeEventListener('abort', onAbort);
    }
    const account = settlementOf(childSessionId, child.events);
    await child.dispose();
    if (this.#runtime.liveAgent(parent.sessionId) === parent) {
      parent.recordChildEvent('subagent/end', {
        runId,
        childSessionId,
        mode: 'one-shot',
        epoch: 1,
        stopReason: account.stopReason,
        ...(account.closingText !== null ? { lastAssistantText: account.closingText } : {}),
      });
    }
    return { childSessionId, messageId: message.id, stopReason: account.stopReason, text: account.closingText };
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
        queueMicrotask(() => void this.#maybeSettle(childSessionId));
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
  async closeLineage(agent: Agent): Promise<void> {
    this.#closing.add(agent.sessionId);
    try {
      await this.#disposeOwned(agent.sessionId);
      await agent.dispose();
    } finally {
      this.#closing.delete(agent.sessionId);
    }
  }

  /** Stops admission (deliveries and starts refuse with `subagent-delivery-unavailable`) and disposes every activation. */
  async drain(): Promise<void> {
    this.#draining = true;
    const roots = this.#registry.all().filter((a) => !this.#registry.get(a.parentSessionId)).map((a) => a.parentSessionId);
    for (const root of new Set(roots)) {
      this.#closing.add(root);
      try {
        await this.#disposeOwned(root);
      } finally {
        this.#closing.delete(root);
      }
    }
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  async #admitStart(parent: Agent, spec: StartChildSpec, mode: ChildMode) {
    const fallback = spec.childSessionId ?? 'a new child';
    if (this.#draining) throw new ChildError('subagent-delivery-unavailable', fallback, 'the runtime is draining; no child can start');
    if (this.#runtime.liveAgent(parent.sessionId) !== parent) {
      throw new ChildError('subagent-parent-unavailable', fallback, `session ${parent.sessionId} is not live in this runtime`);
    }
    const parentHeader = headerOf(parent.events);
    const depth = (parentHeader.delegationDepth ?? 0) + 1;
    if (depth > this.#maxDepth) throw new ChildError('subagent-depth-exceeded', fallback, `delegation depth ${depth} exceeds the cap of ${this.#maxDepth}`);
    const descriptor = descriptorOf(spec, mode); // a snapshot taken before any await
    const childSessionId = spec.childSessionId ?? this.#ids.next();
    const taken = this.#registry.get(childSessionId) !== undefined || this.#runtime.liveAgent(childSessionId) !== undefined;
    if (taken || (spec.childSessionId !== undefined && (await this.#runtime.store.revision(childSessionId)) !== 'no_stream')) {
      throw new ChildError('subagent-duplicate-child', childSessionId, `session ${childSessionId} already exists`);
    }
    if (spec.signal?.aborted) throw cancelled(childSessionId);
    const content = parseContent(spec.content);
    if (!content.ok) throw new InvalidMessageError('content', content.problem);
    return { childSessionId, depth, descriptor };
  }

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

  /** Registers a resident activation and logs its `subagent/start` edge in the parent's log. */
  #activate(parent: Agent, child: Agent, epoch: number, epochStartSeq: number, label: string): Activation {
    const runId = this.#ids.next();
    const activation = this.#registry.register(parent, child, { epoch, runId, epochStartSeq, label });
    parent.recordChildEvent('subagent/start', { runId, childSessionId: child.sessionId, mode: 'continuable', epoch });
    return activation;
  }

  #rollback(parent: Agent, activation: Activation): void {
    this.#registry.deactivate(activation);
    this.#registry.disown(activation);
    parent.recordChildEvent('subagent/end', { runId: activation.runId, childSessionId: activation.childSessionId, mode: 'continuable', epoch: activation.epoch, stopReason: 'abnormal' });
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
    return this.#activate(parent, agent, epoch, loaded.events.length, descriptor.right.label);
  }

  /** The settlement decision, inside the child's lock: a quiet, childless activation is disposed. */
  #maybeSettle(childSessionId: string): Promise<void> {
    return this.#lock
      .run(childSessionId, async () => {
        const a = this.#registry.get(childSessionId);
        if (!a || a.disposing || this.state(childSessionId) !== 'settled') return;
        await a.agent.whenIdle();
        if (this.#registry.get(childSessionId) !== a || this.state(childSessionId) !== 'settled') return;
        await this.#dispose(a);
      })
      .catch((e) => this.#logger.warn(`child ${childSessionId}: settlement failed`, e));
  }

  async #disposeOwned(sessionId: string): Promise<void> {
    for (const childId of [...(this.#registry.owned(sessionId))]) {
      await this.#lock.run(childId, async () => {
        const a = this.#registry.get(childId);
        if (a && !a.disposing) await this.#dispose(a);
        else if (a?.disposing) await a.disposing;
      });
    }
  }

  /**
   * Disposal, in this order (inside the child's lock): admission cutoff; cancel with cause `parent` (pending input
   * cleared); dispose owned children first; await idle; best-effort flush; capture the epoch's account; dispose the
   * agent; remove the activation; send the settlement notice; release ownership; log `subagent/end`.
   */
  #dispose(a: Activation): Promise<void> {
    let cutoff!: () => void;
    a.disposing = new Promise<void>((resolve) => (cutoff = resolve)); // the admission cutoff, synchronously
    return this.#disposeSteps(a).finally(cutoff);
  }

  async #disposeSteps(a: Activation): Promise<void> {
    a.agent.cancel({ kind: 'parent' });
    this.#closing.add(a.childSessionId);
    try {
      await this.#disposeOwned(a.childSessionId);
    } finally {
      this.#closing.delete(a.childSessionId);
    }
    await a.agent.whenIdle();
    await a.agent.checkpoint().catch((e) => this.#logger.warn(`child ${a.childSessionId}: flush before disposal failed`, e));
    const account = settlementOf(a.childSessionId, a.agent.events.slice(a.epochStartSeq));
    await a.agent.dispose().catch((e) => this.#logger.warn(`child ${a.childSessionId}: dispose failed`, e));
    this.#registry.deactivate(a);
    const parent = this.#runtime.liveAgent(a.parentSessionId);
    const parentActivation = this.#registry.get(a.parentSessionId);
    const delivery = settlementDelivery({
      live: parent !== undefined,
      lineageClosing: this.#closing.has(a.parentSessionId) || Boolean(parentActivation?.disposing),
      status: parent?.status ?? 'idle',
    });
    if (parent && delivery !== 'dropped') {
      const notice = this.#message(account.content, account.source);
      try {
        if (delivery === 'inject') parent.inject(notice);
        else {
          this.#registry.acceptFor(parent, notice.id);
          if (delivery === 'followup') parent.followup(notice);
          else parent.steer(notice);
        }
      } catch (e) {
        this.#logger.warn(`child ${a.childSessionId}: settlement notice not delivered`, e);
      }
    }
    this.#registry.disown(a);
    if (!parent) return;
    parent.recordChildEvent('subagent/end', {
      runId: a.runId,
      childSessionId: a.childSessionId,
      mode: 'continuable',
      epoch: a.epoch,
      stopReason: account.stopReason,
      ...(account.closingText !== null ? { lastAssistantText: account.closingText } : {}),
    });
    // the parent may itself be a child that was only waiting for this one
    if (parentActivation?.agent === parent) queueMicrotask(() => void this.#maybeSettle(parent.sessionId));
  }
}
