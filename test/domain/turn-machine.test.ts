import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TurnEndReason } from '../../domain/events.js';
import {
  claimTargetAt,
  continuesIntoNextTurn,
  decideBoundary,
  failureReason,
  latchesWake,
  mergeStepResult,
  shouldAskTurnStopping,
  shouldCloseAfterStep,
  stepResultOf,
  type StepResult,
} from '../../domain/turn-machine.js';

const stepResult: fc.Arbitrary<StepResult> = fc.constantFrom<StepResult>({ kind: 'completed' }, { kind: 'max-tokens' }, null);
const finish = fc.constantFrom<'stop' | 'tool-calls' | 'max-tokens'>('stop', 'tool-calls', 'max-tokens');

/**
 * A pure simulation of one turn's step loop built only from the turn machine: step results, what next-step holds
 * after each step, and pre-step decisions. Returns the reason and the number of steps.
 */
const simulateTurn = (steps: { result: StepResult; staged: number; enter: 'claimed' | 'empty' | 'reject' }[]) => {
  let ending: TurnEndReason | null = null;
  let entered = 0;
  let nextStep = 0;
  for (let boundary = 0; boundary < steps.length; boundary++) {
    const s = steps[boundary]!;
    const claimed = boundary === 0 ? 1 + nextStep : nextStep;
    nextStep = 0;
    const decision = s.enter === 'reject' ? ({ kind: 'reject' } as const) : { kind: 'enter' as const, messages: s.enter === 'empty' ? [] : Array(claimed).fill('m') };
    const outcome = decideBoundary(decision, entered, ending);
    if (outcome.kind === 'close-turn') return { reason: outcome.reason, entered, driver: outcome.driver };
    entered++;
    ending = mergeStepResult(ending, s.result);
    nextStep += s.staged;
    if (shouldCloseAfterStep(ending, nextStep)) return { reason: ending!, entered, driver: 'continue-if-pending' as const };
  }
  return null; // the script ran out before the turn closed
};

describe('turn machine (pure)', () => {
  it('the first boundary claims next-turn, later ones next-step', () => {
    fc.assert(
      fc.property(fc.nat(1000), (b) => {
        expect(claimTargetAt(b)).toBe(b === 0 ? 'next-turn' : 'next-step');
      }),
    );
  });

  it('reject always blocks and stops the driver; a non-empty entry always runs a step', () => {
    fc.assert(
      fc.property(fc.nat(5), fc.option(fc.constantFrom<TurnEndReason>({ kind: 'completed' }, { kind: 'max-tokens' }), { nil: null }), (entered, ending) => {
        expect(decideBoundary({ kind: 'reject' }, entered, ending)).toEqual({ kind: 'close-turn', reason: { kind: 'blocked' }, driver: 'stop' });
        expect(decideBoundary({ kind: 'enter', messages: ['m'] }, entered, ending)).toEqual({ kind: 'run-step' });
      }),
    );
  });

  it('an empty entry: closes with the pending reason, or completes without a step at the first boundary, else runs the owed continuation', () => {
    expect(decideBoundary({ kind: 'enter', messages: [] }, 0, null)).toEqual({ kind: 'close-turn', reason: { kind: 'completed' }, driver: 'stop' });
    expect(decideBoundary({ kind: 'enter', messages: [] }, 2, { kind: 'max-tokens' })).toEqual({ kind: 'close-turn', reason: { kind: 'max-tokens' }, driver: 'continue-if-pending' });
    expect(decideBoundary({ kind: 'enter', messages: [] }, 1, null)).toEqual({ kind: 'run-step' });
  });

  it('step results: max-tokens wins, no tool calls completes, tool calls continue unless one concluded', () => {
    fc.assert(
      fc.property(finish, fc.nat(3), fc.boolean(), (f, calls, concluded) => {
        const r = stepResultOf(f, calls, concluded);
        if (f === 'max-tokens') expect(r).toEqual({ kind: 'max-tokens' });
        else if (calls === 0 || concluded) expect(r).toEqual({ kind: 'completed' });
        else expect(r).toBeNull();
      }),
    );
  });

  it('max-tokens is sticky: once a step hit it, the turn ends max-tokens whatever follows', () => {
    fc.assert(
      fc.property(fc.array(stepResult, { minLength: 1, maxLength: 8 }), (results) => {
        const final = results.reduce<TurnEndReason | null>(mergeStepResult, null);
        if (results.some((r) => r?.kind === 'max-tokens')) expect(final).toEqual({ kind: 'max-tokens' });
        else expect(final).toEqual(results.at(-1));
      }),
    );
  });

  it('a simulated turn closes with blocked, max-tokens or completed exactly as docs/protocol.md §8 says', () => {
    const step = fc.record({ result: stepResult, staged: fc.nat(2), enter: fc.constantFrom<'claimed' | 'empty' | 'reject'>('claimed', 'claimed', 'empty', 'reject') });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 10 }), (steps) => {
        const out = simulateTurn(steps);
        if (!out) return;
        const used = steps.slice(0, out.entered + 1);
        if (out.reason.kind === 'blocked') expect(out.driver).toBe('stop');
        if (out.reason.kind === 'max-tokens') expect(used.some((s) => s.result?.kind === 'max-tokens')).toBe(true);
        if (out.entered === 0) expect(['blocked', 'completed']).toContain(out.reason.kind);
        if (out.entered === 0 && out.reason.kind === 'completed') expect(out.driver).toBe('stop');
        if (out.reason.kind === 'completed' && out.entered > 0) expect(out.driver).toBe('continue-if-pending');
      }),
    );
  });

  it('turn-stopping is asked, and the turn closes, only when the turn is ending and next-step is empty', () => {
    fc.assert(
      fc.property(stepResult, fc.nat(3), (ending, ns) => {
        const expected = ending !== null && ns === 0;
        expect(shouldAskTurnStopping(ending, ns)).toBe(expected);
        expect(shouldCloseAfterStep(ending, ns)).toBe(expected);
      }),
    );
  });

  it('the driver continues only after a normal close with input pending', () => {
    expect(continuesIntoNextTurn('continue-if-pending', true)).toBe(true);
    expect(continuesIntoNextTurn('continue-if-pending', false)).toBe(false);
    expect(continuesIntoNextTurn('stop', true)).toBe(false);
  });

  it('failures: aborted with the first cause when the signal was aborted, else error', () => {
    const err = { message: 'x', code: 'UNKNOWN' };
    expect(failureReason({ kind: 'user' }, err)).toEqual({ kind: 'aborted', reason: { kind: 'user' } });
    expect(failureReason(null, err)).toEqual({ kind: 'error', error: err });
  });

  it('wake latch: never for disposal, always in maintenance, after an abort, and while the driver retires', () => {
    expect(latchesWake('running', null)).toBe(false);
    expect(latchesWake('running', { kind: 'user' })).toBe(true);
    expect(latchesWake('running', { kind: 'disposed' })).toBe(false);
    expect(latchesWake('maintenance', null)).toBe(true);
    expect(latchesWake('maintenance', { kind: 'disposed' })).toBe(false);
    expect(latchesWake('running', null, true)).toBe(true);
    expect(latchesWake('running', { kind: 'disposed' }, true)).toBe(false);
  });
});
