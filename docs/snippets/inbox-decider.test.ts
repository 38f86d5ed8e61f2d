import { expect, it } from 'vitest';
import { followupThenClaim, listsOf } from './inbox-decider.js';

it('docs/protocol.md snippet: a claim takes next-step first, then the next-turn head', () => {
  const { events, state, claimed } = followupThenClaim();
  expect(claimed).toEqual(['steer-1', 'prompt-1']);
  expect(listsOf(state)).toEqual({ nextTurn: [], nextStep: [] });
  expect(events.map((e) => [e.target, e.start, e.removedCount ?? 0, e.inserted.length, e.outcome ?? '-'])).toEqual([
    ['next-turn', 0, 0, 1, '-'],
    ['next-step', 0, 0, 1, '-'],
    ['next-step', 0, 1, 0, '-'],
    ['next-turn', 0, 1, 0, '-'],
  ]);
});
