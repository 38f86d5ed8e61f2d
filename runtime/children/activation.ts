import type { Agent } from '../agent.js';

/**
 * One residency epoch of a continuable child: the live Agent of a durable child session, from the moment it was
 * started or cold-resumed until it settled (or its lineage closed) and was disposed. Not a request, not a task: it
 * may run many FIFO turns. Held only by the children manager.
 */
export interface Activation {
  readonly childSessionId: string;
  readonly parentSessionId: string;
  readonly agent: Agent;
  /** 1 for the activation that created the child, +1 per cold resume. */
  readonly epoch: number;
  /** The id `subagent/start` and `subagent/end` of this epoch carry in the parent's log. */
  readonly runId: string;
  /** The recorded ancestry: the parent first, then its parent, up to the root. */
  readonly ancestry: readonly string[];
  /** The first seq of this epoch in the child's log: the settlement account reads the epoch from here. */
  readonly epochStartSeq: number;
  /** The descriptor's label, for listings. */
  readonly label: string;
  /** Accepted waking ids not yet claimed or discarded (recorded before each send). */
  accepted: ReadonlySet<string>;
  /** Set synchronously when disposal begins (the admission cutoff); resolves when it is complete. */
  disposing: Promise<void> | null;
  /** Unsubscribes the manager's listeners from the agent. */
  readonly detach: () => void;
}
