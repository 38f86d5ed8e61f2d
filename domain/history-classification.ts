import type { InboxSplicedData, LogEvent } from './events.js';
import type { UserMessage } from './message.js';
import { emptyPersistentSet, persistentSetAdd, persistentSetChangeInPlace, persistentSetHas, persistentSetRemove, type PersistentSet } from './persistent-set.js';

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
 * O(k) for k moved messages, whatever the number pending. `consume` (default false): the caller never reads `state`
 * again and holds no other version of its marks, which are then changed in place (`state` itself is returned).
 */
export const classifySplice = (state: ClassificationState, splice: InboxSplicedData, removed: readonly UserMessage[], consume = false): ClassificationState => {
  const inserted = splice.inserted;
  const claims = splice.target === 'next-step' && splice.outcome !== 'canceled' && splice.removedCount;
  if (consume) {
    // the same changes in the same order, on the set itself: no version per mark
    const marks = state.claimedFromNextStep;
    for (let i = 0; i < inserted.length; i++) persistentSetChangeInPlace(marks, inserted[i]!.id, false);
    if (claims) for (let i = 0; i < removed.length; i++) persistentSetChangeInPlace(marks, removed[i]!.id, true);
    return state;
  }
  let marks = state.claimedFromNextStep;
  // (indexed loops: no iterator per splice)
  for (let i = 0; i < inserted.length; i++) marks = persistentSetRemove(marks, inserted[i]!.id);
  if (claims) {
    for (let i = 0; i < removed.length; i++) marks = persistentSetAdd(marks, removed[i]!.id);
  }
  return marks === state.claimedFromNextStep ? state : { claimedFromNextStep: marks };
};

/** Classifies one user/message: non-user source → context; user source claimed from next-step → steering; else prompt. */
export const classifyMessage = (state: ClassificationState, message: UserMessage): { readonly state: ClassificationState; readonly class: MessageClass } => {
  const marked = persistentSetHas(state.claimedFromNextStep, message.id);
  const next = marked ? { claimedFromNextStep: persistentSetRemove(state.claimedFromNextStep, message.id) } : state;
  return { state: next, class: classOf(message, marked) };
};

/**
 * {@link classifyMessage} for a caller that consumes `state` (never reads it again, holds no other version of its
 * marks): the mark is consumed in place, and the class is the only result.
 */
export const classifyMessageInPlace = (state: ClassificationState, message: UserMessage): MessageClass => {
  const marks = state.claimedFromNextStep;
  const marked = persistentSetHas(marks, message.id);
  if (marked) persistentSetChangeInPlace(marks, message.id, false);
  return classOf(message, marked);
};

const classOf = (message: UserMessage, marked: boolean): MessageClass => (message.source.kind !== 'user' ? 'context' : marked ? 'steering' : 'prompt');

/** Is this a `user/message` event? Narrows a {@link LogEvent}. */
export const isUserMessageEvent = (e: LogEvent): e is Extract<LogEvent, { type: 'user/message' }> => e.type === 'user/message';
