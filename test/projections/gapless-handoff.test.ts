import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { queueView, type QueueSnapshot } from '../../projections/index.js';
import { ctx, LogBuilder, msg } from '../../testing/log-builder.js';

const frames = async (b: LogBuilder, gaplessHandoff = true): Promise<string[]> => {
  const out = await lastValueFrom(from(b.events as LogEvent[]).pipe(queueView({ gaplessHandoff }), toArray()));
  return out.map((f: QueueSnapshot) => `${b.events[f.seq]!.type.split('/').at(-1)}@${f.seq}: [${f.items.map((i) => `${i.id}:${i.placement}${i.claimed ? '(claimed)' : ''}`).join(', ')}]`);
};

describe('gapless steering handoff', () => {
  /** A running turn takes a steer at its next step boundary: claim → step/start → user/message. */
  const runningTurnSteer = (): LogBuilder => {
    const b = new LogBuilder().followup(msg('Q'));
    b.turnStart();
    b.claimAndStep(); // step 1 runs Q
    b.steer(msg('S')); // user steers while the turn runs
    b.steer(ctx('C')); // a plugin injects context
    b.claimAndStep(); // step 2: claim S and C, step/start, user/message S, user/message C, …
    b.turnEnd();
    return b;
  };

  it('keeps the claimed steering row (claimed: true) until its user/message is in the log', async () => {
    expect(await frames(runningTurnSteer())).toEqual([
      'spliced@1: [Q:queued]',
      'spliced@3: []',
      'spliced@8: [S:steering]',
      'spliced@9: [S:steering, C:context]',
      'spliced@10: [S:steering(claimed)]', // the claim: S stays, marked claimed; context C goes at once
      'message@12: []', // user/message S (after step/start@11): the durable bubble takes over, no gap
    ]);
  });

  it('without the handoff (gaplessHandoff: false) the row drops at claim time, before step/start and user/message', async () => {
    expect(await frames(runningTurnSteer(), false)).toEqual([
      'spliced@1: [Q:queued]',
      'spliced@3: []',
      'spliced@8: [S:steering]',
      'spliced@9: [S:steering, C:context]',
      'spliced@10: []', // the gap: S vanished, its user/message is two events later
    ]);
  });

  it('a claim at a turn boundary touching both lists: claimed steering rows sit between queued and pending next-step rows', async () => {
    const b = new LogBuilder().followup(msg('Q1')).followup(msg('Q2'));
    b.steer(msg('S1'));
    b.turnStart();
    const batch = b.claim(); // next-step batch [S1], then next-turn head Q1: two splices
    b.steer(msg('S2')); // a new steer lands before the step starts
    b.stepWith(batch);
    b.turnEnd();
    expect(await frames(b)).toEqual([
      'spliced@1: [Q1:queued]',
      'spliced@2: [Q1:queued, Q2:queued]',
      'spliced@3: [Q1:queued, Q2:queued, S1:steering]',
      'spliced@5: [Q1:queued, Q2:queued, S1:steering(claimed)]',
      'spliced@6: [Q2:queued, S1:steering(claimed)]',
      'spliced@7: [Q2:queued, S1:steering(claimed), S2:steering]',
      'message@9: [Q2:queued, S2:steering]', // user/message S1; Q1's user/message@10 changes nothing
    ]);
  });

  it('a turn that ends without the user/message (aborted after the claim) retires the row at turn/end', async () => {
    const b = new LogBuilder();
    b.steer(msg('S'));
    b.turnStart();
    b.claim();
    b.turnEnd({ kind: 'aborted', reason: { kind: 'user' } });
    expect(await frames(b)).toEqual(['spliced@1: [S:steering]', 'spliced@3: [S:steering(claimed)]', 'end@4: []']);
  });

  it('a canceled removal (remove/replace/clear) is not a claim: the row goes at once', async () => {
    const b = new LogBuilder().steer(msg('S')).steer(msg('T'));
    b.do({ kind: 'remove', id: 'S' });
    b.do({ kind: 'clear' });
    expect(await frames(b)).toEqual(['spliced@1: [S:steering]', 'spliced@2: [S:steering, T:steering]', 'spliced@3: [T:steering]', 'spliced@4: []']);
  });
});
