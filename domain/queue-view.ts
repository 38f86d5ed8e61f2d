import type { InboxState } from './inbox/inbox-state.js';
import * as L from './inbox/pending-list.js';
import type { UserMessage } from './message.js';

/** Where a pending item shows (docs/protocol.md §6). */
export type QueuePlacement = 'queued' | 'steering' | 'context';

/** One row of the queue view: a pending message and where it shows (queued, steering, context). */
export interface QueueItem {
  readonly id: string;
  readonly placement: QueuePlacement;
  readonly message: UserMessage;
}

/** The complete queue snapshot: next-turn items (queued, whatever their source), then next-step items (steering for user source, else context). */
export const queueView = (state: InboxState): readonly QueueItem[] => [
  ...L.toArray(state.nextTurn).map((message) => ({ id: message.id, placement: 'queued' as const, message })),
  ...L.toArray(state.nextStep).map((message) => ({
    id: message.id,
    placement: message.source.kind === 'user' ? ('steering' as const) : ('context' as const),
    message,
  })),
];
