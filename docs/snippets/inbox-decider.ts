// #region decide-evolve
import * as E from 'fp-ts/lib/Either.js';
import {
  createUserMessage,
  decideInbox,
  evolveInbox,
  initialInboxState,
  nextStepItems,
  nextTurnItems,
  type InboxSplicedData,
  type InboxState,
} from '../../index.js';

/** command → decide (pure) → events → evolve (pure): the one path every inbox change takes. */
export const followupThenClaim = (): { events: InboxSplicedData[]; state: InboxState; claimed: string[] } => {
  let state = initialInboxState();
  const events: InboxSplicedData[] = [];
  const apply = (decision: ReturnType<typeof decideInbox>) => {
    if (E.isLeft(decision)) throw decision.left; // a typed refusal: duplicate-pending-id, invalid-splice, invalid-message
    for (const event of decision.right.events) {
      events.push(event); // in the runtime: appended to the session log with the expected revision
      state = evolveInbox(state, event);
    }
    return decision.right.removed;
  };
  const ids = ['prompt-1', 'steer-1'];
  const newId = () => ids.shift()!;
  apply(decideInbox({ kind: 'append', target: 'next-turn', message: createUserMessage('Summarize', { kind: 'user' }, { newId }) }, state));
  apply(decideInbox({ kind: 'append', target: 'next-step', message: createUserMessage('Shorter', { kind: 'user' }, { newId }) }, state));
  const claimed = apply(decideInbox({ kind: 'claim', target: 'next-turn' }, state)).map((m) => m.id);
  return { events, state, claimed };
};
// #endregion decide-evolve

export const listsOf = (state: InboxState) => ({ nextTurn: nextTurnItems(state).map((m) => m.id), nextStep: nextStepItems(state).map((m) => m.id) });
