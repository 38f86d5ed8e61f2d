import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../runtime/ports/model.js';
import { isQueueEditError } from '../../domain/queue-edit.js';
import { reject } from '../../runtime/hooks.js';
import { auditLines } from '../../domain/audit.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { deferred, expectConsistent, ids, setup, tick } from './harness.js';

const A = msg('A');
const B = msg('B');

/** A model step that streams `partial` and then hangs until the request is aborted; `streaming` resolves once it streams. */
const streamUntilAbort = (streaming = deferred<ModelRequest>()) => ({
  streaming,
  step: (req: ModelRequest) =>
    new Promise<never>((_, rejectWith) => {
      req.onChunk({ type: 'text', text: 'partial' });
      streaming.resolve(req);
      req.signal.addEventListener('abort', () => rejectWith(new Error('stream aborted')));
    }),
});

/** An agent whose turn 1 (prompt A) has streamed 'partial' and now hangs until aborted. */
const midStep = async () => {
  const s = streamUntilAbort();
  const h = setup({ script: [s.step] });
  h.agent.followup(A);
  const req = await s.streaming.promise;
  return { h, req };
};

describe('scenarios 35–48: cancellation and the wake latch', () => {
  it('35: default cancel mid-step cancels the queued tail, keeps the visible prefix, ends the turn aborted', async () => {
    const { h } = await midStep();
    h.agent.followup(msg('T'));
    h.agent.cancel({ kind: 'user' });
    await h.agent.whenIdle();
    expect(h.durable().slice(3)).toEqual(['SS(1,1)', 'UM(A)', 'CH', 'SPL(NT,0,[T])', 'SPL(NT,0,rc=1,C)', 'AM!', 'SE(1,1)', 'TE(1,aborted:user)']);
    const am = h.agent.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: { text: string }[] }; interrupted: boolean };
    expect(am).toMatchObject({ interrupted: true, message: { content: [{ text: 'partial' }] } });
    expect(h.live).toContain('discarded T');
    expect(h.agent.inbox.nextTurn).toEqual([]);
    const r = auditLines('s', h.agent.events.map((e) => JSON.stringify(e)));
    expect(r.consumedWork).toMatchObject({ endTurn: 1, droppedUnrun: false });
    await expectConsistent(h);
  });

  it('36: keepInbox cancel parks the queued tail; it runs only after a later waking send', async () => {
    const { h } = await midStep();
    h.agent.followup(msg('T'));
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    await h.agent.whenIdle();
    expect(h.durable().at(-1)).toBe('TE(1,aborted:user)');
    expect(h.durable().some((d) => d.includes(',C)'))).toBe(false);
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['T']);
    expect(h.agent.status).toBe('idle');
    h.agent.followup(msg('X'));
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('UM'))).toEqual(['UM(A)', 'UM(T)', 'UM(X)']);
    await expectConsistent(h);
  });

  it('37: a waking send after the abort is latched and runs right after convergence', async () => {
    const { h } = await midStep();
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    h.agent.followup(B);
    await h.agent.whenIdle();
    const d = h.durable();
    expect(d.slice(d.indexOf('SPL(NT,0,[B])'))).toEqual([
      'SPL(NT,0,[B])', 'AM!', 'SE(1,1)', 'TE(1,aborted:user)', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(B)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    expect(h.live.filter((l) => l.startsWith('status'))).toEqual(['status running', 'status idle', 'status running', 'status idle']);
    await expectConsistent(h);
  });

  it('38: a steer after the abort lands in next-turn and runs as turn 2’s prompt (classified prompt)', async () => {
    const { h } = await midStep();
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    h.agent.steer(msg('S'));
    await h.agent.whenIdle();
    expect(h.durable()).toContain('SPL(NT,0,[S])');
    const r = auditLines('s', h.agent.events.map((e) => JSON.stringify(e)));
    expect(r.messages.find((m) => m.id === 'S')?.class).toBe('prompt');
    await expectConsistent(h);
  });

  it('39: a later default cancel clears the latched item and the latch', async () => {
    const { h } = await midStep();
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    h.agent.followup(B);
    h.agent.cancel({ kind: 'user' });
    await h.agent.whenIdle();
    expect(h.durable()).toContain('SPL(NT,0,rc=1,C)');
    expect(h.durable()).not.toContain('TS(2)');
    await expectConsistent(h);
  });

  it('40: a latched item removed before convergence: no replay, no empty turn', async () => {
    const { h } = await midStep();
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    h.agent.steer(msg('S'));
    h.agent.inbox.remove('S');
    await h.agent.whenIdle();
    expect(h.durable()).not.toContain('TS(2)');
    await expectConsistent(h);
  });

  it('41: disposal never latches; the late item stays in the log, pending', async () => {
    const { h } = await midStep();
    const disposed = h.agent.dispose();
    h.agent.followup(msg('L'));
    await disposed;
    expect(h.durable()).toContain('TE(1,aborted:disposed)');
    expect(h.durable()).not.toContain('TS(2)');
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['L']);
    await expectConsistent(h);
  });

  it('disposing an idle agent cancels parked input durably, drains the log and forgets the session', async () => {
    const h = setup();
    h.agent.inject(ctx('C'));
    h.agent.inbox.append('next-turn', msg('Q'));
    await h.agent.dispose();
    expect(h.durable()).toEqual(['SPL(NS,0,[C])', 'SPL(NT,0,[Q])', 'SPL(NS,0,rc=1,C)', 'SPL(NT,0,rc=1,C)']);
    expect(h.agent.dispose()).toBe(h.agent.dispose()); // memoized
    expect(() => h.agent.inject(ctx('late'))).toThrow(expect.objectContaining({ code: 'session-closed' }));
    await expectConsistent(h);
  });

  it('42: cancel right after a waking send: the claimed prompt is lost, the queued one canceled, no step', async () => {
    const h = setup();
    h.agent.followup(A);
    h.agent.followup(B);
    h.agent.cancel({ kind: 'user' });
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SPL(NT,0,[B])', 'SPL(NT,0,rc=1,C)', 'TE(1,aborted:user)']);
    await expectConsistent(h);
  });

  it('43: keepInbox cancel right after a waking send: no canceled splice, no step, the claim accounts', async () => {
    const h = setup();
    h.agent.followup(A);
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'TE(1,aborted:user)']);
    const r = auditLines('s', h.agent.events.map((e) => JSON.stringify(e)));
    expect(r.consumedWork.endTurn).toBe(1);
    await expectConsistent(h);
  });

  it('44: cancel in the running status listener exits before turn/start; a send from there is latched and runs as turn 1', async () => {
    const h = setup();
    let once = true;
    h.agent.on('status', (s) => {
      if (s === 'running' && once) {
        once = false;
        h.agent.cancel({ kind: 'user' });
        h.agent.followup(B);
      }
    });
    h.agent.followup(A);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'SPL(NT,0,rc=1,C)', 'SPL(NT,0,[B])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(B)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    await expectConsistent(h);
  });

  it('45: a send from the request signal’s abort listener is latched and runs as turn 2', async () => {
    const { h, req } = await midStep();
    req.signal.addEventListener('abort', () => void h.agent.followup(msg('R')));
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    await h.agent.whenIdle();
    expect(h.durable().slice(-8)).toEqual(['TE(1,aborted:user)', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(R)', 'AM', 'SE(2,1)', 'TE(2,completed)']);
    await expectConsistent(h);
  });

  it('46: an idle default cancel cancels parked work durably; with nothing pending it writes nothing; an idle keepInbox cancel does nothing', async () => {
    const h = setup();
    h.agent.inject(ctx('C'));
    h.agent.cancel({ kind: 'user' }, { keepInbox: true });
    expect(h.durable()).toEqual(['SPL(NS,0,[C])']);
    h.agent.cancel({ kind: 'user' });
    expect(h.durable()).toEqual(['SPL(NS,0,[C])', 'SPL(NS,0,rc=1,C)']);
    expect(h.live).toEqual(['inserted C', 'discarded C']);
    h.agent.cancel({ kind: 'user' });
    expect(h.durable()).toHaveLength(2);
    await expectConsistent(h);
  });

  it('47: waking sends during maintenance are latched and run when the task ends; injects stay parked', async () => {
    const h = setup();
    const task = deferred();
    const done = h.agent.runMaintenance(() => task.promise);
    expect(() => h.agent.runMaintenance(async () => {})).toThrow();
    h.agent.followup(A);
    expect(h.agent.status).toBe('idle');
    expect(h.durable()).toEqual(['SPL(NT,0,[A])']);
    task.resolve();
    await done;
    await h.agent.whenIdle();
    expect(h.durable().slice(0, 3)).toEqual(['SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)']);
    const h2 = setup();
    const t2 = deferred();
    const d2 = h2.agent.runMaintenance(() => t2.promise);
    h2.agent.inject(ctx('C'));
    t2.resolve();
    await d2;
    await h2.agent.whenIdle();
    expect(h2.durable()).toEqual(['SPL(NS,0,[C])']);
    await expectConsistent(h);
    await expectConsistent(h2);
  });

  it('48: maintenance cancel clears the latch and aborts the task; a resend is forced to next-turn and runs', async () => {
    const h = setup();
    let taskSignal: AbortSignal | undefined;
    const done = h.agent.runMaintenance(
      (signal) =>
        new Promise<void>((resolve) => {
          taskSignal = signal;
          signal.addEventListener('abort', () => setImmediate(resolve));
        }),
    );
    h.agent.followup(A);
    h.agent.cancel({ kind: 'user' });
    expect(taskSignal?.aborted).toBe(true);
    h.agent.steer(B);
    await done;
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'SPL(NT,0,rc=1,C)', 'SPL(NT,0,[B])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(B)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
    await expectConsistent(h);
  });
});

describe('scenarios 56–58: queue edits, claim wins every race', () => {
  it('56: edit keeps id and source, text only', async () => {
    const { h } = await midStep();
    h.agent.followup(msg('Q', 'old', { kind: 'user', rpcId: 'r1' }));
    expect(E.isRight(h.agent.queue.edit('Q', 'new'))).toBe(true);
    expect(h.agent.inbox.nextTurn[0]).toMatchObject({ id: 'Q', source: { kind: 'user', rpcId: 'r1' }, content: [{ type: 'text', text: 'new' }] });
    expect(h.durable().at(-1)).toBe('SPL(NT,0,rc=1,[Q],C)');
    const nonText = h.agent.queue.edit('Q', [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }]);
    expect(E.isLeft(nonText) && nonText.left.code).toBe('queue-edit-non-text');
    h.agent.cancel();
    await expectConsistent(h);
  });

  it('57: remove cancels; a claimed item is not found and nothing is written', async () => {
    const h = setup();
    h.agent.inbox.append('next-turn', msg('Q'));
    expect(E.isRight(h.agent.queue.remove('Q'))).toBe(true);
    expect(h.durable().at(-1)).toBe('SPL(NT,0,rc=1,C)');
    h.agent.followup(A); // claimed synchronously
    const r = h.agent.queue.remove('A');
    expect(E.isLeft(r) && isQueueEditError(r.left) && r.left.code).toBe('queue-item-not-found');
    await expectConsistent(h);
  });

  it('58: strict steer moves a next-turn item to next-step while running; refused when idle or already in next-step', async () => {
    const h = setup({ script: [(req) => (req.turn === 1 ? new Promise((r) => setTimeout(() => r('slow'), 20)) : 'ok')] });
    h.agent.followup(A);
    h.agent.followup(msg('Q'));
    h.agent.followup(msg('R'));
    expect(E.isRight(h.agent.queue.steer('Q'))).toBe(true);
    expect(h.durable().slice(-2)).toEqual(['SPL(NT,0,rc=1,C)', 'SPL(NS,0,[Q])']);
    const again = h.agent.queue.steer('Q');
    expect(E.isLeft(again) && again.left.code).toBe('steer-unavailable');
    await h.agent.whenIdle();
    expect(h.durable()).toContain('SS(1,2)');
    const r = auditLines('s', h.agent.events.map((e) => JSON.stringify(e)));
    expect(r.messages.find((m) => m.id === 'Q')?.class).toBe('steering');
    h.agent.inbox.append('next-turn', msg('idle-item'));
    const idle = h.agent.queue.steer('idle-item');
    expect(E.isLeft(idle) && idle.left.code).toBe('steer-unavailable');
    expect(E.isLeft(h.agent.queue.steer('nope')) && (h.agent.queue.steer('nope') as E.Left<{ code: string }>).left.code).toBe('queue-item-not-found');
    await expectConsistent(h);
  });
});

describe('the retirement gap is closed', () => {
  it('a waking send that lands after the driver’s last pending check still runs', async () => {
    const h = setup();
    h.agent.onEvent((e) => {
      // turn/end of turn 1 is the last append before the driver checks for pending work and retires
      if (e.type === 'turn/end' && (e.data as { turn: number }).turn === 1) queueMicrotask(() => void h.agent.followup(msg('late')));
    });
    h.agent.followup(A);
    await tick();
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('UM'))).toEqual(['UM(A)', 'UM(late)']);
    expect(h.agent.inbox.nextTurn).toEqual([]);
    await expectConsistent(h);
  });

  it('wake() runs parked work without a new message', async () => {
    const h = setup();
    h.agent.on('pre-step', (c, next) => (c.turn === 1 ? { kind: 'reject' } : next()));
    h.agent.followup(A);
    h.agent.followup(B);
    await h.agent.whenIdle();
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['B']);
    expect(h.agent.wake()).toBe(true);
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('UM'))).toEqual(['UM(B)']);
    expect(h.agent.wake()).toBe(false);
    await expectConsistent(h);
  });

  it('wake() during a turn that will block runs the parked work once the driver settles', async () => {
    const h = setup();
    const release = deferred();
    h.agent.on('pre-step', async (c, next) => (c.turn === 1 ? (await release.promise, reject()) : next()));
    h.agent.followup(A);
    h.agent.followup(B);
    expect(h.agent.wake()).toBe(true);
    release.resolve();
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('TE') || d.startsWith('UM'))).toEqual(['TE(1,blocked)', 'UM(B)', 'TE(2,completed)']);
    await expectConsistent(h);
  });
});
