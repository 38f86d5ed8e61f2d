import type { InboxNotification } from '../events.js';

/**
 * A child's state is derived, never stored:
 * - `running`: its agent is running, or it accepted waking input that is not yet claimed or discarded;
 * - `waiting`: quiet, but it still owns live children of its own;
 * - `settled`: quiet and childless — its activation is disposed and the parent gets a settlement account;
 * - `absent`: no activation (never started here, or settled earlier): a delivery cold-resumes it.
 */
export type ChildState = 'running' | 'waiting' | 'settled' | 'absent';

/** What the rule reads of a child's activation. */
export interface ActivationView {
  readonly resident: boolean;
  readonly agentRunning: boolean;
  /** Accepted waking ids not yet claimed or discarded (see `evolveAcceptedIds`). */
  readonly acceptedPending: number;
  /** Live children this child owns. */
  readonly liveChildren: number;
}

/** The state of a child from its activation's live facts. */
export const childState = (view: ActivationView): ChildState => {
  if (!view.resident) return 'absent';
  if (view.agentRunning || view.acceptedPending > 0) return 'running';
  return view.liveChildren > 0 ? 'waiting' : 'settled';
};

/**
 * The accepted-ids set: an id enters when a delivery is accepted (recorded BEFORE the synchronous send, so the
 * admission window never looks like quiescence) and leaves when the child's inbox claims or discards it.
 * Other notifications (insertions) leave it unchanged. Returns the same set when nothing changes.
 */
export const evolveAcceptedIds = (accepted: ReadonlySet<string>, notification: InboxNotification): ReadonlySet<string> => {
  switch (notification.type) {
    case 'agent/inbox/inserted':
      return accepted;
    case 'agent/inbox/claimed':
    case 'agent/inbox/discarded': {
      if (!accepted.has(notification.message.id)) return accepted;
      const next = new Set(accepted);
      next.delete(notification.message.id);
      return next;
    }
  }
};
