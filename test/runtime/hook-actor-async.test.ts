import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import type { Agent } from '../../runtime/agent.js';
import { currentHook, outsideHooks, runInHook } from '../../runtime/hook-scope.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime, type Runtime } from '../../runtime/runtime.js';
import { msg } from '../../testing/log-builder.js';
import { deferred } from './harness.js';

/**
 * What a deciding hook's listener sends anywhere inside its call — after its awaits too, and from work it started
 * without awaiting — is recorded as the hook's (`hook:<name>`); what is sent meanwhile from outside the call (other
 * code, another agent's hooks, the runtime's own later calls) keeps its own actor.
 */

const runtime = (): Runtime =>
  createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([], { whenExhausted: 'ok' }),
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
    actor: 'alice',
  });

/** The actor recorded on the splice that admitted message `id`. */
const actorOf = (agent: Agent, id: string): string | undefined =>
  agent.events.find((e: LogEvent) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes(`"id":"${id}"`))?.metadata?.actor;

describe('a deciding listener’s sends after an await are the hook’s', () => {
  it('a send after awaits is the hook’s; one from outside while the listener waits is not', async () => {
    const rt = runtime();
    const a = rt.createSession({ sessionId: 'a' });
    const gate = deferred();
    const waiting = deferred();
    a.on('pre-step', async (c, next) => {
      if (c.turn === 1 && c.step === 1) {
        waiting.resolve();
        await gate.promise;
        c.agent.inject(msg('from-hook'));
      }
      return next();
    });
    a.followup(msg('prompt'));
    await waiting.promise;
    // the listener is suspended at its await: this send is the test's (alice's), not the hook's
    a.inject(msg('from-outside'));
    gate.resolve();
    await a.whenIdle();
    expect(actorOf(a, 'prompt')).toBe('alice');
    expect(actorOf(a, 'from-outside')).toBe('alice');
    expect(actorOf(a, 'from-hook')).toBe('hook:pre-step');
  });

  it('two agents whose listeners wait at the same time: neither hook is the other’s, nor unrelated code’s', async () => {
    const rt = runtime();
    const a = rt.createSession({ sessionId: 'a' });
    const b = rt.createSession({ sessionId: 'b' });
    const gate = deferred();
    const both = { a: deferred(), b: deferred() };
    a.on('pre-step', async (c, next) => {
      if (c.turn === 1 && c.step === 1) {
        both.a.resolve();
        await gate.promise;
        a.inject(msg('a-own'));
        // a's hook sending to b: b's input from outside b's hooks
        b.inject(msg('a-to-b'));
      }
      return next();
    });
    let steered = false;
    b.on('turn-stopping', async (c) => {
      if (c.turn !== 1 || steered) return;
      steered = true;
      both.b.resolve();
      await gate.promise;
      b.steer(msg('b-own'));
      a.inject(msg('b-to-a'));
    });
    b.followup(msg('b-prompt'));
    a.followup(msg('a-prompt'));
    await Promise.all([both.a.promise, both.b.promise]);
    // unrelated code while both listeners wait
    setTimeout(() => a.inject(msg('timer-to-a')), 0);
    await new Promise((r) => setTimeout(r, 5));
    gate.resolve();
    await Promise.all([a.whenIdle(), b.whenIdle()]);
    expect(actorOf(a, 'a-own')).toBe('hook:pre-step');
    expect(actorOf(b, 'b-own')).toBe('hook:turn-stopping');
    expect(actorOf(b, 'a-to-b')).toBe('alice');
    expect(actorOf(a, 'b-to-a')).toBe('alice');
    expect(actorOf(a, 'timer-to-a')).toBe('alice');
  });

  it('work a listener starts and does not await carries its hook, also after the listener settled', async () => {
    const rt = runtime();
    const a = rt.createSession({ sessionId: 'a' });
    const later = deferred();
    const sent = deferred();
    a.on('pre-step', (c, next) => {
      if (c.turn === 1 && c.step === 1)
        void (async () => {
          await later.promise;
          a.followup(msg('background'));
          sent.resolve();
        })();
      return next();
    });
    a.followup(msg('prompt'));
    await a.whenIdle();
    later.resolve();
    await sent.promise;
    await a.whenIdle();
    expect(actorOf(a, 'background')).toBe('hook:pre-step');
  });

  it('a driver a listener’s send woke runs outside that listener’s call: what the woken agent’s hooks send is theirs', async () => {
    const rt = runtime();
    const a = rt.createSession({ sessionId: 'a' });
    const b = rt.createSession({ sessionId: 'b' });
    a.on('pre-step', async (c, next) => {
      await Promise.resolve();
      // b is idle: this send starts b's driver
      if (c.turn === 1 && c.step === 1) b.followup(msg('a-wakes-b'));
      return next();
    });
    let sent = false;
    b.on('turn-stopping', () => {
      // b's hook sends to a: not a's hook (b's driver does not run inside a's listener's call)
      if (!sent) a.followup(msg('b-to-a'));
      sent = true;
    });
    a.followup(msg('prompt'));
    await a.whenIdle();
    await b.whenIdle();
    await a.whenIdle();
    expect(actorOf(b, 'a-wakes-b')).toBe('alice');
    expect(actorOf(a, 'b-to-a')).toBe('alice');
  });
});

describe('hook-scope', () => {
  it('nested calls: the innermost hook of the same agent wins, other agents’ frames are skipped, across awaits', async () => {
    const a = {};
    const b = {};
    const seen: unknown[] = [];
    await runInHook(a, 'pre-step', async () => {
      seen.push(currentHook(a));
      await runInHook(b, 'turn-stopping', async () => {
        await Promise.resolve();
        seen.push(currentHook(a), currentHook(b));
        await runInHook(a, 'request-error', async () => {
          await new Promise((r) => setTimeout(r, 0));
          seen.push(currentHook(a));
        });
        seen.push(currentHook(a));
      });
      await Promise.resolve();
      seen.push(currentHook(a), currentHook(b));
      seen.push(outsideHooks(() => currentHook(a)));
    });
    seen.push(currentHook(a));
    expect(seen).toEqual(['pre-step', 'pre-step', 'turn-stopping', 'request-error', 'pre-step', 'pre-step', null, null, null]);
  });
});
