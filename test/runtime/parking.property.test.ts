import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent, TurnEndReason } from '../../domain/events.js';
import { enter, reject } from '../../runtime/hooks.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { expectConsistent, setup, tick } from './harness.js';

type Op =
  | { readonly send: 'followup' | 'steer' | 'inject' }
  | { readonly cancel: 'default' | 'keepInbox' }
  | { readonly wait: 'tick' | 'microtask' | 'idle' }
  /** A waking send queued as a microtask right after the next turn/end: it races the driver's retirement. */
  | { readonly afterTurnEnd: 'followup' | 'steer' };
type PreStep = 'next' | 'reject' | 'throw' | 'empty';

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('followup', 'followup', 'steer', 'inject').map((s) => ({ send: s as 'followup' | 'steer' | 'inject' })) },
  { weight: 2, arbitrary: fc.constantFrom('default', 'keepInbox').map((c) => ({ cancel: c as 'default' | 'keepInbox' })) },
  { weight: 3, arbitrary: fc.constantFrom('tick', 'microtask', 'idle').map((w) => ({ wait: w as 'tick' | 'microtask' | 'idle' })) },
  { weight: 2, arbitrary: fc.constantFrom('followup', 'steer').map((s) => ({ afterTurnEnd: s as 'followup' | 'steer' })) },
);

/** A turn that stops the driver and parks whatever is pending, as the log shows it. */
const stopsDriver = (events: readonly LogEvent[], end: LogEvent): boolean => {
  const { turn, reason } = end.data as { turn: number; reason: TurnEndReason };
  if (reason.kind === 'blocked' || reason.kind === 'error' || reason.kind === 'aborted') return true;
  if (reason.kind !== 'completed') return false;
  return !events.some((e) => e.type === 'step/start' && (e.data as { turn: number }).turn === turn); // completed without a step
};

/** Every item still pending that a waking send inserted must be explained by a later driver-stopping turn in the log. */
const unexplained = (events: readonly LogEvent[], pending: readonly string[], waking: ReadonlySet<string>): string[] =>
  pending.filter((id) => {
    if (!waking.has(id)) return false;
    const inserted = events.findLast((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: { id: string }[] }).inserted.some((m) => m.id === id));
    return !events.some((e) => e.type === 'turn/end' && e.seq > inserted!.seq && stopsDriver(events, e));
  });

describe('no silent parking', () => {
  it('whenever the agent is idle with pending work, the log explains why (random sends, cancels and turn outcomes)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), fc.array(fc.constantFrom<PreStep>('next', 'next', 'next', 'reject', 'throw', 'empty'), { minLength: 1, maxLength: 8 }), async (ops, preSteps) => {
        let n = 0;
        // the hook's call count is kept per agent, so the replay check's agent runs the same sequence afresh
        const calls = new WeakMap<object, number>();
        const waking = new Set<string>();
        const h = setup({ whenExhausted: () => new Promise((r) => setImmediate(() => r('ok'))) });
        h.agent.on('pre-step', (c, next) => {
          const i = calls.get(c.agent) ?? 0;
          calls.set(c.agent, i + 1);
          const p = preSteps[i % preSteps.length];
          if (p === 'reject') return reject();
          if (p === 'throw') throw new Error('pre-step failed');
          if (p === 'empty') return enter([]);
          return next();
        });
        const check = () => {
          if (h.agent.status !== 'idle') return;
          const pending = [...h.agent.inbox.nextTurn, ...h.agent.inbox.nextStep].map((m) => m.id);
          expect(unexplained(h.agent.events, pending, waking)).toEqual([]);
        };
        for (const o of ops) {
          if ('send' in o) {
            const id = `${o.send}-${n++}`;
            if (o.send === 'inject') h.agent.inject(ctx(id));
            else {
              waking.add(id);
              if (o.send === 'followup') h.agent.followup(msg(id));
              else h.agent.steer(msg(id));
            }
          } else if ('afterTurnEnd' in o) {
            const id = `late-${o.afterTurnEnd}-${n++}`;
            const off = h.agent.onEvent((e) => {
              if (e.type !== 'turn/end') return;
              off();
              queueMicrotask(() => {
                waking.add(id);
                if (o.afterTurnEnd === 'followup') h.agent.followup(msg(id));
                else h.agent.steer(msg(id));
              });
            });
          } else if ('cancel' in o) {
            h.agent.cancel({ kind: 'user' }, { keepInbox: o.cancel === 'keepInbox' });
          } else if (o.wait === 'tick') await tick();
          else if (o.wait === 'microtask') await Promise.resolve();
          else {
            await h.agent.whenIdle();
            check();
          }
        }
        await h.agent.whenIdle();
        check();
        // and the replay check reproduces it (this property found the inputs recorded between a turn's end and the
        // next turn's start, which the replay re-admits right after that turn/end)
        await expectConsistent(h);
      }),
      { numRuns: 120 },
    );
  });
});
