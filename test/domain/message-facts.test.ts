import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { fateOf, initialFate, stepFate, stepFateInPlace, type MutableInputFate } from '../../domain/input-fate.js';
import { initialMessageFactState, stepMessageFacts, type MessageFact } from '../../domain/message-facts.js';
import { LogBuilder, msg } from '../support/log-builder.js';

const factsOf = (events: readonly LogEvent[]): MessageFact[] => {
  let state = initialMessageFactState();
  const out: MessageFact[] = [];
  for (const e of events) {
    const step = stepMessageFacts(state, e);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
    out.push(...step.right.facts);
  }
  return out;
};
const kinds = (facts: readonly MessageFact[], id: string) => facts.filter((f) => f.id === id).map((f) => `${f.kind}@${f.seq}`);

describe('message fates', () => {
  it('a strict steer (cancel from next-turn, then admitted to next-step in the next event) is a move, not a cancellation', () => {
    const b = new LogBuilder('s');
    b.followup(msg('A')).followup(msg('B'));
    b.turnStart();
    b.claim(); // A (turn 1, step 1)
    b.add('step/start', { turn: 1, step: 1 }).add('user/message', msg('A'));
    b.do({ kind: 'remove', id: 'B' });
    b.do({ kind: 'append', target: 'next-step', message: msg('B') });
    b.add('step/end', { turn: 1, step: 1 });
    b.claimAndStep();
    b.turnEnd();
    const facts = factsOf(b.events);
    expect(kinds(facts, 'B')).toEqual(['admitted@2', 'canceled@7', 'moved@8', 'claimed@10', 'entered@12', 'turn-ended@15']);
    expect(fateOf('B', facts.filter((f) => f.id === 'B'))).toMatchObject({ fate: 'entered', admitted: { seq: 2, target: 'next-step' }, claimed: { turn: 1, step: 2 } });
  });

  it('a step that runs without a claimed input drops it; content changed by the pre-step is "rewritten"', () => {
    const b = new LogBuilder('s');
    b.followup(msg('A', 'secret sk-1')).turnStart();
    b.do({ kind: 'append', target: 'next-step', message: msg('C') });
    b.claim(); // C and A
    b.add('step/start', { turn: 1, step: 1 }).add('user/message', msg('A', 'secret [redacted]'));
    b.add('step/end', { turn: 1, step: 1 }).turnEnd();
    const facts = factsOf(b.events);
    expect(fateOf('C', facts.filter((f) => f.id === 'C'))).toMatchObject({ fate: 'dropped', decided: { seq: 8 } });
    expect(fateOf('A', facts.filter((f) => f.id === 'A'))).toMatchObject({ fate: 'entered', rewritten: true });
  });

  it('inputs inside a fork\'s inherited seed give no facts: the child never inherits pending input', () => {
    const parent = new LogBuilder('p');
    parent.followup(msg('P'));
    const child = new LogBuilder('c');
    child.events.length = 0;
    child.add('session/created', { sessionId: 'c', createdAt: 1, kind: 'ordinary', seedLength: parent.events.length });
    for (const e of parent.events) child.add(e.type, e.data as never);
    child.add('session/end-seed', {});
    expect(factsOf(child.events)).toEqual([]);
  });

  it('an input that entered the model inside a fork\'s seed has one fact, entered (inherited): never a pending fate', () => {
    const parent = new LogBuilder('p');
    parent.followup(msg('P'));
    parent.turnStart().claim();
    parent.add('step/start', { turn: 1, step: 1 }).add('user/message', msg('P'));
    parent.add('step/end', { turn: 1, step: 1 }).turnEnd();
    const child = new LogBuilder('c');
    child.events.length = 0;
    child.add('session/created', { sessionId: 'c', createdAt: 1, kind: 'ordinary', seedLength: parent.events.length });
    for (const e of parent.events) child.add(e.type, e.data as never);
    child.add('session/end-seed', {});
    const entered = child.events.find((e) => e.type === 'user/message')!;
    const facts = factsOf(child.events);
    expect(facts).toEqual([{ kind: 'entered', seq: entered.seq, time: entered.time, id: 'P', turn: 1, step: 1, rewritten: false, inherited: true }]);
    expect(fateOf('P', facts)).toMatchObject({ fate: 'entered', decided: { seq: entered.seq }, admitted: null, claimed: null });
  });
});

describe('stepFateInPlace', () => {
  // one fact of every kind (with and without an actor), about input X
  const at = (seq: number) => ({ seq, time: 1000 + seq, id: 'X' });
  const reason = { kind: 'completed' } as const;
  const FACTS: readonly MessageFact[] = [
    { kind: 'admitted', ...at(1), target: 'next-turn', source: { kind: 'user' } },
    { kind: 'admitted', ...at(2), target: 'next-step', source: { kind: 'user' }, metadata: { actor: 'ann', actorKind: 'user' } },
    { kind: 'edited', ...at(3), target: 'next-turn' },
    { kind: 'moved', ...at(4), to: 'next-step', metadata: { actor: 'bob' } },
    { kind: 'canceled', ...at(5), target: 'next-turn' },
    { kind: 'claimed', ...at(6), target: 'next-step', turn: 2, step: 1, batch: ['X'] },
    { kind: 'entered', ...at(7), turn: 2, step: 1, rewritten: true },
    { kind: 'entered', ...at(8), turn: 0, step: 0, rewritten: false, inherited: true },
    { kind: 'dropped', ...at(9), turn: 2, step: 1 },
    { kind: 'rejected', ...at(10), turn: 3, reason: { kind: 'aborted', reason: { kind: 'user' } } },
    { kind: 'turn-ended', ...at(11), turn: 3, reason, accounted: true },
  ];
  it('leaves the record holding what stepFate returns, keys in the same order, after any sequence of facts', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(FACTS.length - 1), { maxLength: 30 }), (picks) => {
        const record: MutableInputFate = { ...initialFate('X') };
        let expected = initialFate('X');
        const copies: { readonly copy: MutableInputFate; readonly text: string }[] = [];
        for (const i of picks) {
          stepFateInPlace(record, FACTS[i]!);
          expected = stepFate(expected, FACTS[i]!);
          expect(JSON.stringify(record)).toBe(JSON.stringify(expected));
          copies.push({ copy: { ...record }, text: JSON.stringify(record) });
        }
        expect(record).toEqual(expected);
        // the nested records are never changed in place: a shallow copy taken earlier still reads as it did then
        for (const { copy, text } of copies) expect(JSON.stringify(copy)).toBe(text);
      }),
    );
  });

  it('with ownsRecords, holds the same values after any sequence of facts, an admission writing over the admission record it had', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(FACTS.length - 1), { maxLength: 30 }), (picks) => {
        const record: MutableInputFate = { ...initialFate('X') };
        let expected = initialFate('X');
        for (const i of picks) {
          const had = record.admitted;
          stepFateInPlace(record, FACTS[i]!, true);
          expected = stepFate(expected, FACTS[i]!);
          expect(JSON.stringify(record)).toBe(JSON.stringify(expected));
          if (FACTS[i]!.kind === 'admitted' && had !== null) expect(record.admitted).toBe(had);
        }
      }),
    );
  });
});
