import type { InboxTarget } from '../events.js';
import type { UserMessage } from '../message.js';
import * as L from './pending-list.js';

/** The Inbox: two ordered lists. Message ids are unique across both. A persistent value: no change is ever visible to an older state's holder. */
export interface InboxState {
  readonly nextTurn: L.PendingList;
  readonly nextStep: L.PendingList;
}

export const initialInboxState = (): InboxState => ({ nextTurn: L.emptyPendingList, nextStep: L.emptyPendingList });

export const inboxOf = (nextTurn: readonly UserMessage[], nextStep: readonly UserMessage[]): InboxState => ({
  nextTurn: L.pendingListOf(nextTurn),
  nextStep: L.pendingListOf(nextStep),
});

export const listOf = (state: InboxState, target: InboxTarget): L.PendingList =>
  target === 'next-turn' ? state.nextTurn : state.nextStep;

export const withList = (state: InboxState, target: InboxTarget, list: L.PendingList): InboxState =>
  target === 'next-turn' ? { nextTurn: list, nextStep: state.nextStep } : { nextTurn: state.nextTurn, nextStep: list };

export const nextTurnItems = (state: InboxState): readonly UserMessage[] => L.toArray(state.nextTurn);
export const nextStepItems = (state: InboxState): readonly UserMessage[] => L.toArray(state.nextStep);
export const pendingCount = (state: InboxState): number => L.size(state.nextTurn) + L.size(state.nextStep);
export const hasPending = (state: InboxState): boolean => pendingCount(state) > 0;

/** Where a pending id sits, searching next-turn first, then next-step. */
export const locate = (state: InboxState, id: string): { readonly target: InboxTarget; readonly index: number } | undefined => {
  const t = L.indexOf(state.nextTurn, id);
  if (t >= 0) return { target: 'next-turn', index: t };
  const s = L.indexOf(state.nextStep, id);
  if (s >= 0) return { target: 'next-step', index: s };
  return undefined;
};
export const isPending = (state: InboxState, id: string): boolean => L.has(state.nextTurn, id) || L.has(state.nextStep, id);
