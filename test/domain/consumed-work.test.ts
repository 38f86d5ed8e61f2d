import { describe, expect, it } from 'vitest';
import { foldConsumedWork } from '../../domain/consumed-work.js';
import type { TurnEndReason } from '../../domain/events.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';

/** A fresh log after a stepped, completed turn 1. */
const afterTurn1 = () => new LogBuilder().followup(msg('first')).runTurn();
const endOf = (b: LogBuilder) => {
  const r = foldConsumedWork(b.events);
  return { turn: r.end?.turn, droppedUnrun: r.droppedUnrun };
};

describe('foldConsumedWork (scenario 55)', () => {
  it.each<[string, TurnEndReason, number]>([
    ['blocked', { kind: 'blocked' }, 2],
    ['aborted', { kind: 'aborted', reason: { kind: 'user' } }, 2],
    ['error', { kind: 'error', error: { message: 'x', code: 'UNKNOWN' } }, 2],
    ['interrupted', { kind: 'interrupted' }, 2],
    ['completed (claim rewritten to empty)', { kind: 'completed' }, 1],
  ])('claim + turn/end %s → accounting turn %i', (_, reason, turn) => {
    const b = afterTurn1().followup(msg('x'));
    b.turnStart();
    b.claim();
    b.turnEnd(reason);
    expect(endOf(b)).toEqual({ turn, droppedUnrun: false });
  });

  it.each<[string, TurnEndReason]>([
    ['aborted', { kind: 'aborted', reason: { kind: 'user' } }],
    ['error', { kind: 'error', error: { message: 'x', code: 'UNKNOWN' } }],
    ['blocked', { kind: 'blocked' }],
  ])('no claim + turn/end %s → still turn 1', (_, reason) => {
    const b = afterTurn1();
    b.turnStart().turnEnd(reason);
    expect(endOf(b)).toEqual({ turn: 1, droppedUnrun: false });
  });

  it('a stepped max-tokens turn accounts', () => {
    const b = afterTurn1().followup(msg('x'));
    b.runTurn({ kind: 'max-tokens' });
    expect(endOf(b)).toEqual({ turn: 2, droppedUnrun: false });
  });

  it('unrun work canceled after the last turn is a drop', () => {
    const b = afterTurn1().followup(msg('x'));
    b.do({ kind: 'remove', id: 'x' });
    expect(endOf(b)).toEqual({ turn: 1, droppedUnrun: true });
  });

  it('a canceled splice that inserts (a replace) keeps work pending: not a drop', () => {
    const b = afterTurn1().followup(msg('x'));
    b.do({ kind: 'replace', id: 'x', message: msg('y') });
    expect(endOf(b)).toEqual({ turn: 1, droppedUnrun: false });
  });

  it('a drop is absorbed by a later accounting turn', () => {
    const b = afterTurn1().followup(msg('x'));
    b.do({ kind: 'remove', id: 'x' });
    b.followup(msg('z')).runTurn();
    expect(endOf(b)).toEqual({ turn: 2, droppedUnrun: false });
  });

  it('a claim outside any open turn is ignored; an unknown reason kind accounts for a claim', () => {
    const b = afterTurn1().followup(msg('x'));
    b.claim();
    expect(endOf(b)).toEqual({ turn: 1, droppedUnrun: false });
    const events = [...afterTurn1().events];
    const r = foldConsumedWork([
      ...events,
      { seq: 99, id: 'x', time: 0, type: 'turn/start', data: { turn: 2 } },
      { seq: 100, id: 'y', time: 0, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } },
      { seq: 101, id: 'z', time: 0, type: 'turn/end', data: { turn: 2, reason: { kind: 'extension-kind' } } },
    ] as never);
    expect(r.end?.turn).toBe(2);
  });
});
