import { describe, expect, it } from 'vitest';
import { isDuplicatePendingIdError } from '../../domain/errors.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { expectConsistent, ids, setup } from './harness.js';

const A = msg('A');
const B = msg('B');
const C = msg('C');

describe('scenarios 1–10: queueing, steering, injection', () => {
  it('1: idle follow-up claims inside the call and runs one turn', async () => {
    const h = setup();
    h.agent.followup(A);
    expect(h.live).toEqual(['inserted A', 'status running', 'claimed A@1']);
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)']);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    expect(h.live.at(-1)).toBe('status idle');
    expect(h.agent.status).toBe('idle');
    await expectConsistent(h);
  });

  it('2: a burst in one tick gives one FIFO turn per item and one running/idle pair', async () => {
    const h = setup();
    h.agent.followup(A);
    h.agent.followup(B);
    h.agent.followup(C);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SPL(NT,0,[B])', 'SPL(NT,1,[C])', 'SS(1,1)', 'UM(A)', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(B)', 'AM', 'SE(2,1)', 'TE(2,completed)',
      'TS(3)', 'SPL(NT,0,rc=1)', 'SS(3,1)', 'UM(C)', 'AM', 'SE(3,1)', 'TE(3,completed)',
    ]);
    expect(h.live.filter((l) => l.startsWith('status'))).toEqual(['status running', 'status idle']);
    await expectConsistent(h);
  });

  it('3: sequential settled sends: two turns, two running/idle pairs', async () => {
    const h = setup();
    h.agent.followup(A);
    await h.agent.whenIdle();
    h.agent.followup(B);
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('TS') || d.startsWith('UM'))).toEqual(['TS(1)', 'UM(A)', 'TS(2)', 'UM(B)']);
    expect(h.live.filter((l) => l.startsWith('status'))).toEqual(['status running', 'status idle', 'status running', 'status idle']);
    await expectConsistent(h);
  });

  it('4: an idle steer opens a turn and is classified as steering', async () => {
    const h = setup();
    h.agent.steer(msg('S'));
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NS,0,[S])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SS(1,1)', 'UM(S)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    await expectConsistent(h);
  });

  it('5: two idle steers in one tick: one turn, two requests', async () => {
    const h = setup();
    h.agent.steer(msg('S1'));
    h.agent.steer(msg('S2'));
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NS,0,[S1])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SPL(NS,0,[S2])', 'SS(1,1)', 'UM(S1)', 'AM', 'SE(1,1)',
      'SPL(NS,0,rc=1)', 'SS(1,2)', 'UM(S2)', 'AM', 'SE(1,2)', 'TE(1,completed)',
    ]);
    expect(h.model.requests).toHaveLength(2);
    await expectConsistent(h);
  });

  it('6: inject does not wake', async () => {
    const h = setup();
    h.agent.inject(ctx('C'));
    expect(h.durable()).toEqual(['SPL(NS,0,[C])']);
    expect(h.live).toEqual(['inserted C']);
    expect(h.agent.status).toBe('idle');
    expect(ids(h.agent.inbox.nextStep)).toEqual(['C']);
    await expectConsistent(h);
  });

  it('7: parked context is claimed first, with the follow-up, in one step', async () => {
    const h = setup();
    h.agent.inject(ctx('C'));
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NS,0,[C])', 'SPL(NT,0,[A])', 'TS(1)', 'SPL(NS,0,rc=1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(C)', 'UM(A)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    expect(h.live).toEqual(['inserted C', 'inserted A', 'status running', 'claimed C@1', 'claimed A@1', 'status idle']);
    await expectConsistent(h);
  });

  it('8: full claim composition: parked next-step, then the oldest prompt; the new prompt waits its turn', async () => {
    const h = setup();
    h.agent.inject(ctx('C'));
    h.agent.inject(msg('S'));
    h.agent.inbox.append('next-turn', msg('Q'));
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NS,0,[C])', 'SPL(NS,1,[S])', 'SPL(NT,0,[Q])', 'SPL(NT,1,[A])', 'TS(1)', 'SPL(NS,0,rc=2)', 'SPL(NT,0,rc=1)',
      'SS(1,1)', 'UM(C)', 'UM(S)', 'UM(Q)', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(A)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    await expectConsistent(h);
  });

  it('9: a wake whose item vanished gives a step-less completed turn', async () => {
    const h = setup();
    h.agent.on('inbox/inserted', (m) => void h.agent.inbox.remove(m.id));
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'SPL(NT,0,rc=1,C)', 'TS(1)', 'TE(1,completed)']);
    expect(h.model.requests).toHaveLength(0);
    expect(h.live.filter((l) => l.startsWith('status'))).toEqual(['status running', 'status idle']);
    // the recorded turn/start claims nothing (its item was canceled first): the replay wakes it with wake({evenIfEmpty})
    await expectConsistent(h);
  });

  it('10: inject during a running text step extends the same turn by one model call', async () => {
    const h = setup({
      script: [
        (_req) => {
          h.agent.inject(ctx('C'));
          return 'first';
        },
      ],
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'SPL(NS,0,[C])', 'AM', 'SE(1,1)',
      'SPL(NS,0,rc=1)', 'SS(1,2)', 'UM(C)', 'AM', 'SE(1,2)', 'TE(1,completed)',
    ]);
    await expectConsistent(h);
  });
});

describe('scenarios 11–18 at the agent: splices, no-ops, duplicates, replace, remove after claim', () => {
  it('11–14: splice normalization through agent.inbox', async () => {
    const h = setup();
    expect(h.agent.inbox.splice('next-turn', Number.NaN, Number.NaN, msg('A'), msg('B'))).toEqual([]);
    expect(ids(h.agent.inbox.splice('next-turn', -1, 1))).toEqual(['B']);
    h.agent.inbox.splice('next-turn', 99, 5, msg('B'));
    h.agent.inbox.splice('next-turn', 1.9, 0.7, msg('C'));
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['A', 'C', 'B']);
    expect(h.durable()).toEqual(['SPL(NT,0,[A,B])', 'SPL(NT,1,rc=1,C)', 'SPL(NT,1,[B])', 'SPL(NT,1,[C])']);
    expect(h.live).toEqual(['inserted A', 'inserted B', 'discarded B', 'inserted B', 'inserted C']);
    await expectConsistent(h);
  });

  it('15: no-ops write nothing and notify nothing', async () => {
    const h = setup();
    expect(h.agent.inbox.splice('next-step', 0, 0)).toEqual([]);
    expect(h.agent.inbox.remove('nope')).toBe(false);
    expect(h.agent.inbox.clear()).toEqual([]);
    expect(h.durable()).toEqual([]);
    expect(h.live).toEqual([]);
  });

  it('16: a duplicate id throws the typed error, writes nothing and does not wake', async () => {
    const h = setup();
    h.agent.inbox.append('next-turn', A);
    expect(() => h.agent.inbox.append('next-step', A)).toThrow('message "A" is already pending');
    let caught: unknown;
    try {
      h.agent.followup(A);
    } catch (e) {
      caught = e;
    }
    expect(isDuplicatePendingIdError(caught)).toBe(true);
    expect(h.agent.status).toBe('idle');
    expect(() => h.agent.inbox.splice('next-turn', 0, 0, B, B)).toThrow();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])']);
    await expectConsistent(h);
  });

  it('17: replace changing and keeping identity; refused when the new id is pending', async () => {
    const h = setup();
    h.agent.inbox.append('next-turn', A);
    h.agent.inject(msg('S'));
    expect(h.agent.inbox.replace('A', B)).toBe(true);
    expect(h.agent.inbox.replace('S', msg('S', 'edited'))).toBe(true);
    expect(() => h.agent.inbox.replace('S', B)).toThrow();
    expect(h.agent.inbox.replace('X', C)).toBe(false);
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'SPL(NS,0,[S])', 'SPL(NT,0,rc=1,[B],C)', 'SPL(NS,0,rc=1,[S],C)']);
    expect(h.live).toEqual(['inserted A', 'inserted S', 'discarded A', 'inserted B', 'discarded S', 'inserted S']);
    await expectConsistent(h);
  });

  it('18: remove after claim finds nothing; the turn completes normally', async () => {
    const h = setup();
    h.agent.followup(A);
    expect(h.agent.inbox.remove('A')).toBe(false);
    await h.agent.whenIdle();
    expect(h.durable().at(-1)).toBe('TE(1,completed)');
    expect(h.durable().filter((d) => d.includes(',C)'))).toEqual([]);
    await expectConsistent(h);
  });
});

