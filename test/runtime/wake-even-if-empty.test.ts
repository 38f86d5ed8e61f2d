import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../adapters/replay/replay-check.js';
import type { ModelRequest } from '../../runtime/ports/model.js';
import { enter } from '../../runtime/hooks.js';
import { msg } from '../support/log-builder.js';
import { deferred, expectConsistent, setup } from './harness.js';

/**
 * `wake({evenIfEmpty})`: an idle agent starts a turn with nothing pending — the shape a turn records whose waking
 * input was canceled before it started — so that a replay can reproduce it. Without the option, a wake of an empty
 * inbox runs nothing, as before.
 */
describe('wake({evenIfEmpty})', () => {
  it('without it, an idle agent with nothing pending runs nothing and writes nothing', async () => {
    const h = setup();
    const before = h.agent.events.length;
    expect(h.agent.wake()).toBe(false);
    expect(h.agent.wake({ evenIfEmpty: false })).toBe(false);
    await h.agent.whenIdle();
    expect(h.agent.events.length).toBe(before);
  });

  it('with it, an idle agent starts a turn that claims nothing and completes without a step, recording who woke it', async () => {
    const h = setup();
    expect(h.agent.wake({ evenIfEmpty: true, actor: 'ops' })).toBe(true);
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['TS(1)', 'TE(1,completed)']);
    expect(h.agent.events.find((e) => e.type === 'turn/start')?.metadata).toEqual({ actor: 'ops', actorKind: 'user' });
    expect(h.model.requests).toHaveLength(0);
    await expectConsistent(h);
  });

  it('a pre-step listener of such a turn sees no messages and may enter its own', async () => {
    const h = setup({ script: ['ok'] });
    const seen: number[] = [];
    h.agent.on('pre-step', (c, next) => (seen.push(c.messages.length), c.step === 1 ? enter([msg('from-hook')]) : next()));
    h.agent.wake({ evenIfEmpty: true });
    await h.agent.whenIdle();
    expect(seen[0]).toBe(0);
    expect(h.durable()).toEqual(['TS(1)', 'SS(1,1)', 'UM(from-hook)', 'AM', 'SE(1,1)', 'TE(1,completed)']);
  });

  it('while a turn runs, it is the same as without it: with nothing pending, nothing is latched', async () => {
    const answering = deferred<void>();
    const started = deferred<void>();
    const h = setup({ script: [(_r: ModelRequest) => (started.resolve(), answering.promise.then(() => 'ok'))] });
    h.agent.followup(msg('A'));
    await started.promise;
    expect(h.agent.wake({ evenIfEmpty: true })).toBe(false);
    answering.resolve();
    await h.agent.whenIdle();
    expect(h.durable().filter((d) => d.startsWith('TS'))).toEqual(['TS(1)']);
  });

  it('a recorded wake whose input a listener canceled inside the send is replay-checked equal', async () => {
    const h = setup();
    h.agent.on('inbox/inserted', (m) => void h.agent.inbox.remove(m.id));
    h.agent.followup(msg('A'));
    await h.agent.whenIdle();
    expect(h.durable()).toEqual(['SPL(NT,0,[A])', 'SPL(NT,0,rc=1,C)', 'TS(1)', 'TE(1,completed)']);
    expect(await replayCheck(h.agent.events)).toEqual({ ok: true, events: h.agent.events.length });
  });
});
