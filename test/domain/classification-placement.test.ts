import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import type { MessageSource } from '../../domain/message.js';
import { queueView as domainQueueView } from '../../domain/queue-view.js';
import { historyClassification, queueView, type QueueSnapshot } from '../../projections/index.js';
import { LogBuilder, msg } from '../support/log-builder.js';

/**
 * How history classifies a user/message (prompt / steering / context) and where the queue view places a pending
 * item (queued / steering / context), checked on the audit fold and on the projections, one rule per test.
 */

/** Each user/message's class, from the audit and from the historyClassification projection (they must agree). */
const classes = async (b: LogBuilder): Promise<string[]> => {
  const report = auditLines(b.sessionId, b.events.map((e) => JSON.stringify(e)));
  expect(report.errors).toEqual([]);
  const audited = report.messages.map((m) => `${m.id}:${m.class}`);
  const projected = (await lastValueFrom(from(b.events as LogEvent[]).pipe(historyClassification(), toArray()))).map((c) => `${c.message.id}:${c.class}`);
  expect(projected).toEqual(audited);
  return audited;
};

const frames = async (b: LogBuilder): Promise<string[]> => {
  const out = await lastValueFrom(from(b.events as LogEvent[]).pipe(queueView(), toArray()));
  return out.map((f: QueueSnapshot) => `${f.seq}: [${f.items.map((i) => `${i.id}:${i.placement}${i.claimed ? '(claimed)' : ''}`).join(', ')}]`);
};

/** A running turn (step 1 ran Q) that takes steer S at its next boundary: the claim marks S as claimed from next-step. */
const steerClaimed = (): LogBuilder => {
  const b = new LogBuilder().followup(msg('Q'));
  b.turnStart();
  b.claimAndStep();
  b.steer(msg('S'));
  expect(b.claim().map((m) => m.id)).toEqual(['S']);
  return b;
};

describe('history classification', () => {
  it('a steer claimed from next-step and entered is steering (the baseline the next rules change)', async () => {
    const b = steerClaimed();
    b.stepWith([msg('S')]);
    b.turnEnd();
    expect(await classes(b)).toEqual(['Q:prompt', 'S:steering']);
  });

  it('an insertion of an id clears its steering mark: re-inserted before its user/message, it later enters as a prompt', async () => {
    const b = steerClaimed();
    b.turnEnd(); // the turn ends without entering S (a rejecting pre-step, say): S's mark is still set
    b.followup(msg('S')); // the same id is queued again
    b.runTurn(); // claimed from next-turn: a prompt, not steering
    expect(await classes(b)).toEqual(['Q:prompt', 'S:prompt']);
  });

  it('the first user/message of an id consumes its mark: the same id entered again later is a prompt', async () => {
    const b = steerClaimed();
    b.stepWith([msg('S')]); // consumes the mark: steering
    b.stepWith([msg('S')]); // a pre-step enters the same message again in a later step
    b.turnEnd();
    expect(await classes(b)).toEqual(['Q:prompt', 'S:steering', 'S:prompt']);
  });

  const NON_USER: readonly MessageSource[] = [
    { kind: 'plugin', plugin: 'p' },
    { kind: 'coordinator' },
    { kind: 'subagent-report', childSession: 'c' },
    { kind: 'subagent-settled', childSession: 'c' },
    { kind: 'some-extension', extra: 1 },
  ];

  it.each(NON_USER.map((s) => [s.kind, s]))('a %s source is context, whether it arrives by next-step (claimed) or by next-turn', async (_, source) => {
    const b = new LogBuilder().followup(msg('Q')).followup(msg('N', 'n', source));
    b.turnStart();
    b.claimAndStep(); // Q
    b.steer(msg('X', 'x', source));
    b.claimAndStep(); // X, claimed from next-step
    b.turnEnd();
    b.runTurn(); // N, claimed from next-turn
    expect(await classes(b)).toEqual(['Q:prompt', 'X:context', 'N:context']);
  });
});

describe('queue view placement', () => {
  it.each([
    ['user', 'steering', { kind: 'user' }],
    ['plugin', 'context', { kind: 'plugin', plugin: 'p' }],
    ['coordinator', 'context', { kind: 'coordinator' }],
    ['subagent-report', 'context', { kind: 'subagent-report' }],
    ['subagent-settled', 'context', { kind: 'subagent-settled' }],
    ['an unknown kind', 'context', { kind: 'some-extension' }],
  ] as const)('a next-step item of a %s source shows as %s; in next-turn it is queued', async (_, placement, source) => {
    const b = new LogBuilder().followup(msg('T', 't', source as MessageSource)).steer(msg('X', 'x', source as MessageSource));
    expect(domainQueueView(b.inbox).map((i) => `${i.id}:${i.placement}`)).toEqual(['T:queued', `X:${placement}`]);
    expect((await frames(b)).at(-1)).toBe(`2: [T:queued, X:${placement}]`);
  });

  it('a claimed steering row re-inserted before its user/message shows once in the gapless view', async () => {
    const b = steerClaimed(); // S claimed: shown as a claimed steering row until its user/message
    const claimAt = b.events.length - 1;
    b.steer(msg('S')); // re-inserted into next-step before any user/message S
    const reinsertAt = b.events.length - 1;
    const f = await frames(b);
    expect(f).toContain(`${claimAt}: [S:steering(claimed)]`);
    expect(f.at(-1)).toBe(`${reinsertAt}: [S:steering]`);
  });
});
