import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../runtime/ports/model.js';
import { reject } from '../../runtime/hooks.js';
import { msg } from '../support/log-builder.js';
import { deferred, expectConsistent, ids, setup } from './harness.js';

/**
 * The wake latch's lifecycle: set by a waking send the active driver cannot take (after an abort, while retiring,
 * during maintenance) or by an explicit wake(); cleared by a default cancel; consumed when the driver continues into
 * another turn. Each test leaves input pending that only a stale latch would run.
 */

/** Turn 1 (prompt A) streams and then hangs until aborted. */
const midStep = async () => {
  const streaming = deferred<ModelRequest>();
  const h = setup({
    script: [
      (req: ModelRequest) =>
        new Promise<never>((_, fail) => {
          req.onChunk({ type: 'text', text: 'partial' });
          streaming.resolve(req);
          req.signal.addEventListener('abort', () => fail(new Error('stream aborted')));
        }),
    ],
  });
  h.agent.followup(msg('A'));
  await streaming.promise;
  return h;
};

describe('wake latch lifecycle', () => {
  it('a default cancel clears a latch set earlier: input added afterwards without waking stays parked', async () => {
    const h = await midStep();
    h.agent.cancel({ kind: 'user' }, { keepInbox: true }); // abort turn 1
    h.agent.followup(msg('B')); // a waking send after the abort: latched
    h.agent.cancel({ kind: 'user' }); // default cancel: cancels B and clears the latch
    h.agent.send(msg('C'), 'next-turn', false); // no wake: only a stale latch would run it
    await h.agent.whenIdle();
    expect(h.durable()).not.toContain('TS(2)');
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['C']);
    expect(h.agent.status).toBe('idle');
    await expectConsistent(h);
  });

  it('a latch is consumed when the driver continues into another turn: a later blocked turn leaves the rest parked', async () => {
    const h = setup();
    const release = deferred();
    h.agent.on('pre-step', async (c, next) => {
      if (c.turn === 1) await release.promise;
      return c.turn === 2 ? reject() : next();
    });
    h.agent.followup(msg('A'));
    h.agent.followup(msg('B'));
    h.agent.followup(msg('C'));
    expect(h.agent.wake()).toBe(true); // latched during turn 1
    release.resolve();
    await h.agent.whenIdle();
    // turn 1 completes and the driver continues into turn 2 (B), which consumes the latch; turn 2 blocks
    expect(h.durable().filter((d) => d.startsWith('TE') || d.startsWith('TS'))).toEqual(['TS(1)', 'TE(1,completed)', 'TS(2)', 'TE(2,blocked)']);
    expect(ids(h.agent.inbox.nextTurn)).toEqual(['C']);
    await expectConsistent(h);
  });
});
