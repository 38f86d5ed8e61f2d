import { childState, evolveAcceptedIds, type ChildState } from '../../domain/children/child-state.js';
import type { Agent } from '../agent.js';
import type { Activation } from './activation.js';
import type { ChildEntry } from './child-options.js';

/**
 * The process-local registry of resident activations and of who owns which live child. It keeps each activation's
 * accepted-ids set current from the child's own inbox notifications, and calls `onQuiet` whenever a child may have
 * become quiet (its agent went idle, or its last accepted id was claimed or discarded) — the manager then takes the
 * settlement decision under the child's lock. It decides nothing itself.
 */
export class ActivationRegistry {
  readonly #activations = new Map<string, Activation>();
  /** Live activations owned by each session (a root or a child). */
  readonly #owned = new Map<string, Set<string>>();
  readonly #onQuiet: (childSessionId: string) => void;

  constructor(onQuiet: (childSessionId: string) => void) {
    this.#onQuiet = onQuiet;
  }

  /** The resident activation of a child, if any. */
  get(childSessionId: string): Activation | undefined {
    return this.#activations.get(childSessionId);
  }

  /** Every resident activation. */
  all(): Activation[] {
    return [...this.#activations.values()];
  }

  /** The child ids a session owns, now. */
  owned(sessionId: string): string[] {
    return [...(this.#owned.get(sessionId) ?? [])];
  }

  /** Registers a resident activation of `child` owned by `parent`, listening to the child's inbox and status. */
  register(parent: Agent, child: Agent, epoch: { readonly epoch: number; readonly runId: string; readonly epochStartSeq: number; readonly label: string }): Activation {
    const childSessionId = child.sessionId;
    const quiet = () => queueMicrotask(() => this.#onQuiet(childSessionId));
    const settleAccepted = (note: Parameters<typeof evolveAcceptedIds>[1]) => {
      const a = this.#activations.get(childSessionId);
      if (!a) return;
      a.accepted = evolveAcceptedIds(a.accepted, note);
      if (a.accepted.size === 0) quiet();
    };
    const listeners = [
      child.on('inbox/claimed', (m, turn) => settleAccepted({ type: 'agent/inbox/claimed', message: m, turn })),
      child.on('inbox/discarded', (m) => settleAccepted({ type: 'agent/inbox/discarded', message: m })),
      child.on('status', (s) => {
        if (s === 'idle') quiet();
      }),
    ];
    const activation: Activation = {
      childSessionId,
      parentSessionId: parent.sessionId,
      agent: child,
      ...epoch,
      ancestry: [parent.sessionId, ...(this.#activations.get(parent.sessionId)?.ancestry ?? [])],
      accepted: new Set(),
      disposing: null,
      detach: () => listeners.forEach((off) => off()),
    };
    this.#activations.set(childSessionId, activation);
    let owned = this.#owned.get(parent.sessionId);
    if (!owned) this.#owned.set(parent.sessionId, (owned = new Set()));
    owned.add(childSessionId);
    return activation;
  }

  /** Records an accepted waking id (before it is sent, so the admission window never looks quiet). */
  accept(activation: Activation, messageId: string): void {
    activation.accepted = new Set([...activation.accepted, messageId]);
  }

  /** Records an accepted id in the activation of `agent`, if `agent` is a resident child (a parent that is itself a child). */
  acceptFor(agent: Agent, messageId: string): void {
    const a = this.#activations.get(agent.sessionId);
    if (a?.agent === agent) this.accept(a, messageId);
  }

  /** Removes the activation (no more deliveries reach its agent) and stops listening to it. */
  deactivate(activation: Activation): void {
    activation.detach();
    if (this.#activations.get(activation.childSessionId) === activation) this.#activations.delete(activation.childSessionId);
  }

  /** Releases the parent's ownership of the child. */
  disown(activation: Activation): void {
    const owned = this.#owned.get(activation.parentSessionId);
    owned?.delete(activation.childSessionId);
    if (owned?.size === 0) this.#owned.delete(activation.parentSessionId);
  }

  /** The derived state of a child (`absent` when it has no activation here). */
  state(childSessionId: string): ChildState {
    const a = this.#activations.get(childSessionId);
    if (!a) return 'absent';
    return childState({
      resident: true,
      agentRunning: a.agent.status === 'running',
      acceptedPending: a.accepted.size,
      liveChildren: this.#owned.get(childSessionId)?.size ?? 0,
    });
  }

  /** The live children of a session (`children`) or its whole live subtree (`descendants`). */
  list(parentSessionId: string, scope: 'children' | 'descendants'): ChildEntry[] {
    const out: ChildEntry[] = [];
    const visit = (id: string) => {
      for (const childId of this.owned(id)) {
        const a = this.#activations.get(childId);
        if (!a) continue;
        out.push({ childSessionId: childId, parentSessionId: id, mode: 'continuable', state: this.state(childId), epoch: a.epoch, label: a.label });
        if (scope === 'descendants') visit(childId);
      }
    };
    visit(parentSessionId);
    return out;
  }
}
