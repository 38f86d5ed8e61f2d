import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../domain/events.js';
import { isImpossibleEventError } from '../../domain/errors.js';
import * as E from 'fp-ts/lib/Either.js';
import { nextStepItems, nextTurnItems } from '../../domain/inbox/inbox-state.js';
import { queueView } from '../../domain/queue-view.js';
import { deriveNotifications, foldSession, initialSessionState, stepSession } from '../../domain/session-fold.js';
import { auditLines } from '../../domain/audit.js';
import { ctx, LogBuilder, msg, uuidAt } from '../../testing/log-builder.js';

const retype = (events: SessionEvent[]): SessionEvent[] => events.map((e, i) => ({ ...e, seq: i, id: uuidAt(i + 1) }) as SessionEvent);

describe('session fold', () => {
  it('derives the same notifications from the log as the live deciders emitted', () => {
    const b = new LogBuilder().followup(msg('A')).followup(msg('B'));
    b.steer(ctx('C'));
    b.runTurn();
    b.do({ kind: 'replace', id: 'B', message: msg('B2') });
    b.do({ kind: 'splice', target: 'next-step', start: 0, deleteCount: 0, insert: [msg('S1'), msg('S2')] });
    b.turnStart();
    b.claimAndStep();
    b.turnEnd();
    b.do({ kind: 'clear' });
    expect(deriveNotifications(b.events)).toEqual(b.notifications);
    expect(b.notifications.map((n) => `${n.type.split('/').at(-1)} ${n.message.id}${'turn' in n ? `@${n.turn}` : ''}`)).toEqual([
      'inserted A', 'inserted B', 'inserted C', 'claimed C@1', 'claimed A@1', 'discarded B', 'inserted B2', 'inserted S1', 'inserted S2',
      'claimed S1@2', 'claimed S2@2', 'claimed B2@2',
    ]);
  });

  it('with notifications off and each state consumed, folds to the same states and removed items, with no notification', () => {
    const b = new LogBuilder().followup(msg('A')).followup(msg('B'));
    b.steer(ctx('C'));
    b.runTurn();
    b.do({ kind: 'replace', id: 'B', message: msg('B2') });
    b.do({ kind: 'splice', target: 'next-step', start: 0, deleteCount: 0, insert: [msg('S1'), msg('S2'), msg('S3')] });
    b.do({ kind: 'splice', target: 'next-step', start: 1, deleteCount: 1, insert: [] });
    b.turnStart();
    b.claimAndStep();
    b.turnEnd();
    b.do({ kind: 'clear' });
    let plain = initialSessionState();
    let quiet = initialSessionState();
    let notified = 0;
    for (const e of b.events) {
      const p = stepSession(plain, e);
      const q = stepSession(quiet, e, { notifications: false, consume: true });
      if (E.isLeft(p) || E.isLeft(q)) throw new Error('refused');
      notified += p.right.notifications.length;
      expect(q.right.notifications).toEqual([]);
      expect(q.right.removed).toEqual(p.right.removed);
      expect(q.right.closedTurn).toEqual(p.right.closedTurn);
      expect(nextTurnItems(q.right.state.inbox)).toEqual(nextTurnItems(p.right.state.inbox));
      expect(nextStepItems(q.right.state.inbox)).toEqual(nextStepItems(p.right.state.inbox));
      plain = p.right.state;
      quiet = q.right.state;
    }
    expect(notified).toBeGreaterThan(0);
  });

  it('classifies prompts, steering (claimed from next-step, user source) and context (any non-user source)', () => {
    const b = new LogBuilder();
    b.steer(msg('S')); // idle steer opens a turn: still steering
    b.runTurn();
    b.followup(msg('Q'));
    b.followup(msg('Qp', 'from plugin', { kind: 'plugin', plugin: 'p' }));
    b.steer(ctx('C'));
    b.runTurn();
    b.runTurn();
    const r = auditLines('s', b.toJsonl().split('\n'));
    expect(r.ok).toBe(true);
    expect(r.messages.map((m) => `${m.id}:${m.class}`)).toEqual(['S:steering', 'C:context', 'Q:prompt', 'Qp:context']);
  });

  it('queue view: next-turn items are queued whatever their source; next-step user → steering, else context', () => {
    const b = new LogBuilder().followup(ctx('P')).followup(msg('Q')).steer(msg('S'));
    b.steer(ctx('C'));
    expect(queueView(b.inbox).map((q) => `${q.id}:${q.placement}`)).toEqual(['P:queued', 'Q:queued', 'S:steering', 'C:context']);
  });

  it('a fork child skips the inherited pending input and continues turn numbers', () => {
    const parent = new LogBuilder('parent').followup(msg('A')).runTurn().followup(msg('P'));
    const seed = parent.events;
    const child: SessionEvent[] = retype([
      { seq: 0, id: uuidAt(1), time: 1, type: 'session/created', data: { sessionId: 'child', createdAt: 1, kind: 'ordinary', parentSession: 'parent', seedLength: seed.length } },
      ...seed,
      { seq: 0, id: uuidAt(1), time: 1, type: 'session/end-seed', data: {} },
    ] as SessionEvent[]);
    const { state, error } = foldSession(child);
    expect(error).toBeNull();
    expect(nextTurnItems(state.inbox)).toEqual([]);
    expect(state.turns.lastTurn).toBe(1);
    expect(deriveNotifications(child)).toEqual([]);
    const missingEnd = retype(child.slice(0, -1).concat([{ ...child.at(-1)!, type: 'turn/start', data: { turn: 2 } } as SessionEvent]));
    expect(isImpossibleEventError(foldSession(missingEnd).error)).toBe(true);
  });

  it.each<[string, (b: LogBuilder) => void]>([
    ['a turn/start while a turn is open', (b) => b.turnStart().turnStart()],
    ['a turn/start out of sequence', (b) => b.add('turn/start', { turn: 3 })],
    ['a step outside a turn', (b) => b.add('step/start', { turn: 1, step: 1 })],
    ['a step that skips a number', (b) => b.turnStart().add('step/start', { turn: 1, step: 2 })],
    ['a step/end that closes nothing', (b) => b.turnStart().add('step/end', { turn: 1, step: 1 })],
    ['a turn/end with an open step', (b) => b.turnStart().add('step/start', { turn: 1, step: 1 }).turnEnd()],
    ['an assistant message outside its step', (b) => b.turnStart().add('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', content: [] } })],
    ['a second session/created', (b) => b.add('session/created', { sessionId: 'x', createdAt: 1, kind: 'ordinary' })],
  ])('refuses %s, naming its seq', (_, build) => {
    const b = new LogBuilder();
    build(b);
    const { error } = foldSession(b.events);
    expect(isImpossibleEventError(error)).toBe(true);
    expect(error!.seq).toBe(b.events.length - 1);
  });

  it('refuses a log that does not start with session/created', () => {
    const b = new LogBuilder().followup(msg('A'));
    const { error } = foldSession(retype(b.events.slice(1)));
    expect(error?.code).toBe('impossible-event');
  });

  it('a splice that does not fit is refused and nothing past it applies', () => {
    const b = new LogBuilder().followup(msg('A'));
    b.add('agent/inbox/spliced', { target: 'next-turn', start: 5, inserted: [msg('B')] });
    b.followup(msg('C'));
    const r = foldSession(b.events);
    expect(r.error?.code).toBe('invalid-splice');
    expect(r.error?.seq).toBe(2);
    expect(nextTurnItems(r.state.inbox).map((m) => m.id)).toEqual(['A']);
  });
});
