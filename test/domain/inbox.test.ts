import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { isDuplicatePendingIdError, isInvalidMessageError, isInvalidSpliceError } from '../../domain/errors.js';
import type { InboxSplicedData } from '../../domain/events.js';
import { decideInbox, type InboxCommand } from '../../domain/inbox/inbox-decide.js';
import { applySplice, evolveInbox } from '../../domain/inbox/inbox-evolve.js';
import { notificationsOfSplice } from '../../domain/inbox/inbox-notifications.js';
import { inboxOf, initialInboxState, nextStepItems, nextTurnItems, type InboxState } from '../../domain/inbox/inbox-state.js';
import { ctx, msg } from '../../testing/log-builder.js';

const A = msg('A');
const B = msg('B');
const C = msg('C');
const S = msg('S');
const X = msg('X');
const Y = msg('Y');

const ids = (s: InboxState) => ({ nt: nextTurnItems(s).map((m) => m.id), ns: nextStepItems(s).map((m) => m.id) });
/** decide, then evolve every event; returns events, removed, notifications and the new state. */
const run = (state: InboxState, command: InboxCommand, turn = 1) => {
  const d = decideInbox(command, state);
  if (E.isLeft(d)) throw d.left;
  let s = state;
  const notes = [];
  for (const e of d.right.events) {
    notes.push(...notificationsOfSplice(s, e, turn));
    s = evolveInbox(s, e);
  }
  return { events: d.right.events, removed: d.right.removed.map((m) => m.id), state: s, notes: notes.map((n) => `${n.type.split('/').at(-1)} ${n.message.id}`) };
};
const refusal = (state: InboxState, command: InboxCommand) => {
  const d = decideInbox(command, state);
  if (E.isRight(d)) throw new Error('expected a refusal');
  return d.left;
};
const slim = (e: InboxSplicedData) => ({ ...e, inserted: e.inserted.map((m) => m.id) });

describe('Inbox splice normalization (scenarios 11–14)', () => {
  it('11: NaN start and count insert at 0 and remove nothing', () => {
    const r = run(initialInboxState(), { kind: 'splice', target: 'next-turn', start: Number.NaN, deleteCount: Number.NaN, insert: [A, B] });
    expect(r.events.map(slim)).toEqual([{ target: 'next-turn', start: 0, inserted: ['A', 'B'] }]);
    expect(ids(r.state).nt).toEqual(['A', 'B']);
    expect(r.removed).toEqual([]);
    expect(r.notes).toEqual(['inserted A', 'inserted B']);
  });

  it('12: a negative start counts from the end', () => {
    const r = run(inboxOf([A, B], []), { kind: 'splice', target: 'next-turn', start: -1, deleteCount: 1, insert: [] });
    expect(r.events.map(slim)).toEqual([{ target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' }]);
    expect(r.removed).toEqual(['B']);
    expect(r.notes).toEqual(['discarded B']);
    expect(ids(r.state).nt).toEqual(['A']);
  });

  it('13: oversized coordinates clamp; -10/Infinity removes everything', () => {
    const r = run(inboxOf([A], []), { kind: 'splice', target: 'next-turn', start: 99, deleteCount: 5, insert: [B] });
    expect(r.events.map(slim)).toEqual([{ target: 'next-turn', start: 1, inserted: ['B'] }]);
    expect(ids(r.state).nt).toEqual(['A', 'B']);
    const r2 = run(inboxOf([], [X, Y]), { kind: 'splice', target: 'next-step', start: -10, deleteCount: Infinity, insert: [] });
    expect(r2.events.map(slim)).toEqual([{ target: 'next-step', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' }]);
    expect(r2.notes).toEqual(['discarded X', 'discarded Y']);
    const r3 = run(inboxOf([A, B], []), { kind: 'splice', target: 'next-turn', start: Infinity, deleteCount: -Infinity, insert: [C] });
    expect(ids(r3.state).nt).toEqual(['A', 'B', 'C']);
  });

  it('14: fractional coordinates truncate', () => {
    const r = run(inboxOf([A, B], []), { kind: 'splice', target: 'next-turn', start: 1.9, deleteCount: 0.7, insert: [C] });
    expect(r.events.map(slim)).toEqual([{ target: 'next-turn', start: 1, inserted: ['C'] }]);
    expect(ids(r.state).nt).toEqual(['A', 'C', 'B']);
  });

  it('an omitted deleteCount removes to the end, like Array.prototype.splice', () => {
    const r = run(inboxOf([A, B, C], []), { kind: 'splice', target: 'next-turn', start: 1, insert: [] });
    expect(r.removed).toEqual(['B', 'C']);
  });
});

describe('no-ops and refusals (scenarios 15–16)', () => {
  it('15: empty splice, unknown remove/replace and clear on empty write nothing', () => {
    const empty = initialInboxState();
    for (const c of [
      { kind: 'splice', target: 'next-step', start: 0, deleteCount: 0, insert: [] },
      { kind: 'remove', id: 'nope' },
      { kind: 'replace', id: 'nope', message: A },
      { kind: 'clear' },
      { kind: 'claim', target: 'next-turn' },
    ] as InboxCommand[]) {
      const r = run(empty, c);
      expect(r.events).toEqual([]);
      expect(r.removed).toEqual([]);
      expect(r.state).toBe(empty);
    }
  });

  it('16: a pending id cannot be added again to either list, nor twice in one splice', () => {
    const s = inboxOf([A], []);
    const e1 = refusal(s, { kind: 'append', target: 'next-step', message: A });
    expect(isDuplicatePendingIdError(e1)).toBe(true);
    expect(e1.message).toBe('message "A" is already pending');
    expect(isDuplicatePendingIdError(refusal(s, { kind: 'append', target: 'next-turn', message: A }))).toBe(true);
    expect(isDuplicatePendingIdError(refusal(s, { kind: 'splice', target: 'next-turn', start: 0, deleteCount: 0, insert: [B, B] }))).toBe(true);
    expect(ids(s)).toEqual({ nt: ['A'], ns: [] });
  });

  it('refuses messages that are not UserMessages or not lossless JSON', () => {
    const s = initialInboxState();
    expect(isInvalidMessageError(refusal(s, { kind: 'append', target: 'next-turn', message: { ...A, role: 'assistant' } as never }))).toBe(true);
    expect(isInvalidMessageError(refusal(s, { kind: 'append', target: 'next-turn', message: { ...A, id: '' } as never }))).toBe(true);
    expect(isInvalidMessageError(refusal(s, { kind: 'append', target: 'next-turn', message: { ...A, source: undefined } as never }))).toBe(true);
    expect(isInvalidMessageError(refusal(s, { kind: 'append', target: 'next-turn', message: { ...A, content: [{ type: 'text', text: 'x', n: Number.NaN }] } as never }))).toBe(true);
    const img = refusal(s, { kind: 'append', target: 'next-turn', message: { ...A, content: [{ type: 'image', mediaType: 'image/png', data: 'not base64!' }] } as never });
    expect(isInvalidMessageError(img)).toBe(true);
    expect((img as { path: string }).path).toContain('content');
  });

  it('keeps unknown source kinds verbatim and an empty plugin name', () => {
    const odd = msg('O', 'o', { kind: 'team-message', from: 'bob', nested: { x: 1 } });
    const empty = msg('P', 'p', { kind: 'plugin', plugin: '' });
    const r = run(initialInboxState(), { kind: 'splice', target: 'next-step', start: 0, deleteCount: 0, insert: [odd, empty] });
    expect(nextStepItems(r.state)[0]!.source).toEqual({ kind: 'team-message', from: 'bob', nested: { x: 1 } });
    expect(nextStepItems(r.state)[1]!.source).toEqual({ kind: 'plugin', plugin: '' });
  });

  it('stores a detached frozen snapshot, never the caller object', () => {
    const mine = { id: 'M', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } as const;
    const r = run(initialInboxState(), { kind: 'append', target: 'next-turn', message: mine as never });
    const stored = nextTurnItems(r.state)[0]!;
    expect(stored).toEqual(mine);
    expect(stored).not.toBe(mine);
    expect(Object.isFrozen(stored.content[0])).toBe(true);
  });
});

describe('replace, remove, clear (scenario 17)', () => {
  it('17: replace changes or keeps identity; refuses an id pending elsewhere', () => {
    const s0 = inboxOf([A], [S]);
    const r1 = run(s0, { kind: 'replace', id: 'A', message: B });
    expect(r1.events.map(slim)).toEqual([{ target: 'next-turn', start: 0, removedCount: 1, inserted: ['B'], outcome: 'canceled' }]);
    expect(r1.notes).toEqual(['discarded A', 'inserted B']);
    expect(r1.removed).toEqual(['A']);
    const S2 = msg('S', 'new content');
    const r2 = run(r1.state, { kind: 'replace', id: 'S', message: S2 });
    expect(r2.events.map(slim)).toEqual([{ target: 'next-step', start: 0, removedCount: 1, inserted: ['S'], outcome: 'canceled' }]);
    expect(nextStepItems(r2.state)[0]!.content).toEqual([{ type: 'text', text: 'new content' }]);
    expect(isDuplicatePendingIdError(refusal(r2.state, { kind: 'replace', id: 'S', message: B }))).toBe(true);
    expect(run(r2.state, { kind: 'replace', id: 'X', message: C }).events).toEqual([]);
  });

  it('remove is a canceled single removal; clear cancels next-step then next-turn', () => {
    const s = inboxOf([A, B], [X, Y]);
    const r = run(s, { kind: 'remove', id: 'X' });
    expect(r.events.map(slim)).toEqual([{ target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' }]);
    const c = run(s, { kind: 'clear' });
    expect(c.events.map(slim)).toEqual([
      { target: 'next-step', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' },
      { target: 'next-turn', start: 0, removedCount: 2, inserted: [], outcome: 'canceled' },
    ]);
    expect(c.notes).toEqual(['discarded X', 'discarded Y', 'discarded A', 'discarded B']);
    expect(ids(c.state)).toEqual({ nt: [], ns: [] });
    expect(ids(s)).toEqual({ nt: ['A', 'B'], ns: ['X', 'Y'] });
  });
});

describe('claim', () => {
  it('takes every next-step item FIFO, then the next-turn head; pure deletions with claimed notifications', () => {
    const s = inboxOf([A, B], [ctx('C1'), S]);
    const r = run(s, { kind: 'claim', target: 'next-turn' }, 7);
    expect(r.events.map(slim)).toEqual([
      { target: 'next-step', start: 0, removedCount: 2, inserted: [] },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
    ]);
    expect(r.removed).toEqual(['C1', 'S', 'A']);
    expect(r.notes).toEqual(['claimed C1', 'claimed S', 'claimed A']);
    expect(ids(r.state)).toEqual({ nt: ['B'], ns: [] });
  });

  it('for next-step takes only next-step', () => {
    const r = run(inboxOf([A], [S]), { kind: 'claim', target: 'next-step' });
    expect(r.removed).toEqual(['S']);
    expect(ids(r.state)).toEqual({ nt: ['A'], ns: [] });
    expect(run(inboxOf([A], []), { kind: 'claim', target: 'next-step' }).events).toEqual([]);
  });
});

describe('evolve validates durable splices', () => {
  const s = inboxOf([A, B], [X]);
  const cases: [string, InboxSplicedData, (e: unknown) => boolean][] = [
    ['start past the end', { target: 'next-turn', start: 3, inserted: [C] }, isInvalidSpliceError],
    ['negative start', { target: 'next-turn', start: -1, inserted: [C] }, isInvalidSpliceError],
    ['fractional start', { target: 'next-turn', start: 0.5, inserted: [C] }, isInvalidSpliceError],
    ['removal past the end', { target: 'next-turn', start: 1, removedCount: 2, inserted: [] }, isInvalidSpliceError],
    ['removedCount 0', { target: 'next-turn', start: 0, removedCount: 0, inserted: [C] }, isInvalidSpliceError],
    ['id pending in the other list', { target: 'next-turn', start: 0, inserted: [X] }, isDuplicatePendingIdError],
    ['id pending outside the removed range', { target: 'next-turn', start: 0, removedCount: 1, inserted: [B], outcome: 'canceled' }, isDuplicatePendingIdError],
    ['twice in one splice', { target: 'next-step', start: 1, inserted: [C, C] }, isDuplicatePendingIdError],
  ];
  it.each(cases)('refuses %s and changes nothing', (_, splice, guard) => {
    const r = applySplice(s, splice);
    expect(E.isLeft(r) && guard(r.left)).toBe(true);
    expect(ids(s)).toEqual({ nt: ['A', 'B'], ns: ['X'] });
    expect(() => evolveInbox(s, splice)).toThrow();
  });

  it('accepts re-inserting an id the same splice removes (identity-preserving edit)', () => {
    const r = applySplice(s, { target: 'next-turn', start: 1, removedCount: 1, inserted: [msg('B', 'edited')], outcome: 'canceled' });
    expect(E.isRight(r) && nextTurnItems(r.right)[1]!.content).toEqual([{ type: 'text', text: 'edited' }]);
  });
});
