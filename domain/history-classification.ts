import type { InboxSplicedData, LogEvent } from './events.js';
import type { UserMessage } from './message.js';
import { emptyPersistentSet, persistentSetAdd, persistentSetHas, persistentSetRemove, type PersistentSet } from './persistent-set.js';

/** How history shows a durable user/message (docs/protocol.md §6). */
export type MessageClass = 'prompt' | 'steering' | 'context';

/**
 * Ids claimed from next-step (non-canceled removals) and not re-inserted since. A mark is consumed by the first
 * user/message that carries the id, so the set holds only claims still waiting for their user/message.
 * A persistent set: O(1) per mark added or consumed, and an older state keeps its marks.
 */
export interface ClassificationState {
  readonly claimedFromNextStep: PersistentSet;
}

/** The classification fold's state before any event. */
export const initialClassificationState = (): ClassificationState => ({ claimedFromNextStep: emptyPersistentSet() });

/** Is `id` marked as claimed from next-step and still waiting for its user/message? */
export const isMarkedSteering = (state: ClassificationState, id: string): boolean => persistentSetHas(state.claimedFromNextStep, id);

/**
 * Updates the marks for one splice; `removed` is what the splice removed (as `applySpliceRemoving` returns it).
 * O(k) for k moved messages, whatever the number pending.
 */
export const classifySplice = (state: ClassificationState, splice: InboxSplicedData, removed: readonly UserMessage[]): ClassificationState => {
  let marks = state.claimedFromNextStep;
  // (indexed loops: no iterator per splice)
  const inserted = splice.inserted;
  for (let i = 0; i < inserted.length; i++) marks = persistentSetRemove(marks, inserted[i]!.id);
  if (splice.target === 'next-step' && splice.outcome !== 'canceled' && splice.removedCount) {
    for (let i = 0; i < removed.length; i++) marks = persistentSetAdd(marks, removed[i]!.id);
  }
  return marks === state.claimedFromNextStep ? state : { claimedFromNextStep: marks };
};

/** Classifies one user/message: non-user source → context; user source claimed from next-step → steering; else prompt. */
export const classifyMessage = (state: ClassificationState, message: UserMessage): { readonly state: ClassificationState; readonly class: MessageClass } => {
  const marked = persistentSetHas(state.claimedFromNextStep, message.id);
  const next = marked ? { claimedFromNextStep: persistentSetRemove(state.claimedFromNextStep, message.id) } : state;
  if (message.source.kind !== 'user') return { state: next, class: 'context' };
  return { state: next, class: marked ? 'steering' : 'prompt' };
};

/** Is this a `user/message` event? Narrows a {@link LogEvent}. */
export const isUserMessageEvent = (e: LogEvent): e is Extract<LogEvent, { type: 'user/message' }> => e.type === 'user/message';
