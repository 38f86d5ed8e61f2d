import { runEnd } from '../../domain/children/child-runs.js';
import { settlementDelivery, settlementOf } from '../../domain/children/settlement.js';
import type { Agent } from '../agent.js';
import type { Activation } from './activation.js';
import type { ChildrenPort } from './children-port.js';
import { epochStart, recordRunEnd } from './epoch-edges.js';

/** What disposal needs from the manager. */
type DisposalPort = Pick<ChildrenPort, 'runtime' | 'logger' | 'lock' | 'registry' | 'message'>;

/**
 * The end of activations: the settlement decision, disposal in its fixed order (with the settlement notice to the
 * parent and `subagent/end` in its log), and the closing of a whole lineage. It keeps the sessions whose lineage is
 * closing, so that settlements to them are injected, never waking.
 */
export class Disposal {
  readonly #port: DisposalPort;
  /** Sessions whose lineage is closing: settlements to them are injected, never waking. */
  readonly #closing = new Set<string>();

  constructor(port: DisposalPort) {
    this.#port = port;
  }

  /** The settlement decision, inside the child's lock: a quiet, childless activation is disposed. */
  settle(childSessionId: string): Promise<void> {
    const { lock, registry, logger } = this.#port;
    return lock
      .run(childSessionId, async () => {
        const a = registry.get(childSessionId);
        if (!a || a.disposing || registry.state(childSessionId) !== 'settled') return;
        await a.agent.whenIdle();
        if (registry.get(childSessionId) !== a || registry.state(childSessionId) !== 'settled') return;
        await this.#dispose(a);
      })
      .catch((e) => logger.warn(`child ${childSessionId}: settlement failed`, e));
  }

  /** `ChildManager.closeLineage`: the session's children are disposed first, then its own agent. */
  async closeLineage(agent: Agent): Promise<void> {
    this.#closing.add(agent.sessionId);
    try {
      await this.#disposeOwned(agent.sessionId);
      await agent.dispose();
    } finally {
      this.#closing.delete(agent.sessionId);
    }
  }

  /** The disposal part of `ChildManager.drain`: every lineage of resident activations is closed, from its root. */
  async closeAll(): Promise<void> {
    const { registry } = this.#port;
    const roots = registry.all().filter((a) => !registry.get(a.parentSessionId)).map((a) => a.parentSessionId);
    for (const root of new Set(roots)) {
      this.#closing.add(root);
      try {
        await this.#disposeOwned(root);
      } finally {
        this.#closing.delete(root);
      }
    }
  }

  async #disposeOwned(sessionId: string): Promise<void> {
    const { lock, registry } = this.#port;
    for (const childId of [...registry.owned(sessionId)]) {
      await lock.run(childId, async () => {
        const a = registry.get(childId);
        if (a && !a.disposing) await this.#dispose(a);
        else if (a?.disposing) await a.disposing;
      });
    }
  }

  /**
   * Disposal, in this order (inside the child's lock): admission cutoff; cancel with cause `parent` (pending input
   * cleared); dispose owned children first; await idle; best-effort flush; capture the epoch's account; dispose the
   * agent; remove the activation; send the settlement notice; release ownership; log `subagent/end` (in the live
   * parent, or through the store when the parent is gone).
   */
  #dispose(a: Activation): Promise<void> {
    let cutoff!: () => void;
    a.disposing = new Promise<void>((resolve) => (cutoff = resolve)); // the admission cutoff, synchronously
    return this.#disposeSteps(a).finally(cutoff);
  }

  async #disposeSteps(a: Activation): Promise<void> {
    const { runtime, logger, registry } = this.#port;
    a.agent.cancel({ kind: 'parent' });
    this.#closing.add(a.childSessionId);
    try {
      await this.#disposeOwned(a.childSessionId);
    } finally {
      this.#closing.delete(a.childSessionId);
    }
    await a.agent.whenIdle();
    await a.agent.checkpoint().catch((e) => logger.warn(`child ${a.childSessionId}: flush before disposal failed`, e));
    const account = settlementOf(a.childSessionId, a.agent.events.slice(a.epochStartSeq));
    await a.agent.dispose().catch((e) => logger.warn(`child ${a.childSessionId}: dispose failed`, e));
    registry.deactivate(a);
    const parent = runtime.liveAgent(a.parentSessionId);
    const parentActivation = registry.get(a.parentSessionId);
    const delivery = settlementDelivery({
      live: parent !== undefined,
      lineageClosing: this.#closing.has(a.parentSessionId) || Boolean(parentActivation?.disposing),
      status: parent?.status ?? 'idle',
    });
    if (parent && delivery !== 'dropped') {
      const notice = this.#port.message(account.content, account.source);
      try {
        if (delivery === 'inject') parent.inject(notice);
        else {
          registry.acceptFor(parent, notice.id);
          if (delivery === 'followup') parent.followup(notice);
          else parent.steer(notice);
        }
      } catch (e) {
        logger.warn(`child ${a.childSessionId}: settlement notice not delivered`, e);
      }
    }
    registry.disown(a);
    // in the live parent at once; through the store when the parent is gone (or at its next resume)
    await recordRunEnd(this.#port, a.parentSessionId, runEnd(epochStart(a), account));
    // the parent may itself be a child that was only waiting for this one
    if (parent && parentActivation?.agent === parent) queueMicrotask(() => void this.settle(parent.sessionId));
  }
}
