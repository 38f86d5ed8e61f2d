import type { InboxTarget } from '../events.js';
import type { UserMessage } from '../message.js';
import * as L from './pending-list.js';

/** The Inbox: two ordered lists. Message ids are unique across both. A persistent value: no change is ever visible to an older state's holder. */
export interface InboxState {
  readonly nextTurn: L.PendingList;
  readonly nextStep: L.PendingList;
}

/** The empty inbox: both lists empty. */
export const initialInboxState = (): InboxState => ({ nextTurn: L.emptyPendingList, nextStep: L.emptyPendingList });

/** An inbox state holding exactly these lists (for tests and examples). */
export const inboxOf = (nextTurn: readonly UserMessage[], nextStep: readonly UserMessage[]): InboxState => ({
  nextTurn: L.pendingListOf(nextTurn),
  nextStep: L.pendingListOf(nextStep),
});

/** One list of an inbox state. */
export const listOf = (state: InboxState, target: InboxTarget): L.PendingList =>
  target === 'next-turn' ? state.nextTurn : state.nextStep;

/**
 * An inbox state with one list replaced; `state` itself when `list` is the list it holds there already (a consumed
 * splice changes its list in place and gives it back: no inbox object per splice).
 */
export const withList = (state: InboxState, target: InboxTarget, list: L.PendingList): InboxState =>
  target === 'next-turn'
    ? state.nextTurn === list
      ? state
      : { nextTurn: list, nextStep: state.nextStep }
    : state.nextStep === list
      ? state
      : { nextTurn: state.nextTurn, nextStep: list };

/** The next-turn list (queued prompts), in claim order. */
export const nextTurnItems = (state: InboxState): readonly UserMessage[] => L.toArray(state.nextTurn);
/** The next-step list (steering and context), in claim order. */
export const nextStepItems = (state: InboxState): readonly UserMessage[] => L.toArray(state.nextStep);
/** The number of pending items in both lists. */
export const pendingCount = (state: InboxState): number => L.size(state.nextTurn) + L.size(state.nextStep);
/** Whether either inbox list holds an item. */
export const hasPending = (state: InboxState): boolean => pendingCount(state) > 0;

/** Where a pending id sits, searching next-turn first, then next-step. */
export const locate = (state: InboxState, id: string): { readonly target: InboxTarget; readonly index: number } | undefined => {
  const t = L.indexOf(state.nextTurn, id);
  if (t >= 0) return { target: 'next-turn', index: t };
  const s = L.indexOf(state.nextStep, id);
  if (s >= 0) return { target: 'next-step', index: s };
  return undefined;
};
/** Whether a message with this id is pending in either list. */
export const isPending = (state: InboxState, id: string): boolean => L.has(state.nextTurn, id) || L.has(state.nextStep, id);
