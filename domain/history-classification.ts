import type { InboxSplicedData, LogEvent } from './events.js';
import * as L from './inbox/pending-list.js';
import type { InboxState } from './inbox/inbox-state.js';
import { listOf } from './inbox/inbox-state.js';
import type { UserMessage } from './message.js';

/** How history shows a durable user/message (docs/protocol.md §6). */
export type MessageClass = 'prompt' | 'steering' | 'context';

/**
 * Ids claimed from next-step (non-canceled removals) and not re-inserted since. A mark is consumed by the first
 * user/message that carries the id, so the set holds only claims still waiting for their user/message.
 */
export interface ClassificationState {
  readonly claimedFromNextStep: ReadonlySet<string>;
}

/** The classification fold's state before any event. */
export const initialClassificationState = (): ClassificationState => ({ claimedFromNextStep: new Set() });

/** Updates the marks for one splice; `before` is the inbox state the splice applies to. */
export const classifySplice = (state: ClassificationState, before: InboxState, splice: InboxSplicedData): ClassificationState => {
  let set: Set<string> | null = null;
  const edit = (): Set<string> => (set ??= new Set(state.claimedFromNextStep));
  for (const m of splice.inserted) if ((set ?? state.claimedFromNextStep).has(m.id)) edit().delete(m.id);
  if (splice.target === 'next-step' && splice.outcome !== 'canceled' && splice.removedCount) {
    for (const m of L.slice(listOf(before, 'next-step'), splice.start, splice.removedCount)) edit().add(m.id);
  }
  return set ? { claimedFromNextStep: set } : state;
};

/** Classifies one user/message: non-user source → context; user source claimed from next-step → steering; else prompt. */
export const classifyMessage = (state: ClassificationState, message: UserMessage): { readonly state: ClassificationState; readonly class: MessageClass } => {
  const marked = state.claimedFromNextStep.has(message.id);
  const next = marked ? { claimedFromNextStep: new Set([...state.claimedFromNextStep].filter((id) => id !== message.id)) } : state;
  if (message.source.kind !== 'user') return { state: next, class: 'context' };
  return { state: next, class: marked ? 'steering' : 'prompt' };
};

/** Is this a `user/message` event? Narrows a {@link LogEvent}. */
export const isUserMessageEvent = (e: LogEvent): e is Extract<LogEvent, { type: 'user/message' }> => e.type === 'user/message';
