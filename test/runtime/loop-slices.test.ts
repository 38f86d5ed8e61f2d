import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { silentLogger } from '../../runtime/logger.js';
import { LoopSlices, type LoopGate } from '../../runtime/loop-slices.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import { msg } from '../support/log-builder.js';

/** A hand-driven loop: `schedule` queues the release, `turn()` runs what was queued (one check phase), microtasks after. */
const manualLoop = () => {
  let queued: (() => void)[] = [];
  return {
    schedule: (run: () => void) => void queued.push(run),
    pending: () => queued.length,
    turn: async () => {
      const runs = queued;
      queued = [];
      for (const r of runs) r();
      // the released callers' continuations (microtasks) and the release's own steps (ticks) run after the phase
      for (let i = 0; i < 50; i++) await new Promise((r) => process.nextTick(r));
    },
  };
};

describe('LoopSlices', () => {
  it('releases callers first come first served, never synchronously, in one loop turn while the budget lasts', async () => {
    const loop = manualLoop();
    const slices = new LoopSlices({ budgetMs: 4, now: () => 0, schedule: loop.schedule });
    const order: number[] = [];
    const waits = [0, 1, 2].map((i) => slices.next().then(() => order.push(i)));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(slices.waiting).toBe(3);
    await loop.turn();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2]);
    expect(slices.waiting).toBe(0);
  });

  it('once the slices released in a loop turn ran for the budget, the rest wait for the next loop turn', async () => {
    const loop = manualLoop();
    let clock = 0;
    const slices = new LoopSlices({ budgetMs: 4, now: () => clock, schedule: loop.schedule });
    const ran: number[] = [];
    // each caller's slice runs 1.5 ms of the clock
    for (let i = 0; i < 8; i++)
      void slices.next().then(() => {
        clock += 1.5;
        ran.push(i);
      });
    await loop.turn();
    // 0 ms, 1.5, 3.0 < 4: three slices; at 4.5 the budget is spent
    expect(ran).toEqual([0, 1, 2]);
    expect(loop.pending()).toBe(1);
    await loop.turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
    await loop.turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(loop.pending()).toBe(0);
  });

  it('counts a slice to its end, not to its first await: work after a few awaits is inside the budget', async () => {
    const loop = manualLoop();
    let clock = 0;
    const slices = new LoopSlices({ budgetMs: 4, now: () => clock, schedule: loop.schedule });
    const ran: number[] = [];
    // each caller checks a few things (awaits of settled promises, as an admission does), then runs 1.5 ms of work
    for (let i = 0; i < 8; i++)
      void (async () => {
        await slices.next();
        await null;
        await Promise.resolve();
        await null;
        clock += 1.5;
        ran.push(i);
      })();
    await loop.turn();
    // three slices (0, 1.5, 3.0 < 4); released on their first await only, all eight would run in this loop turn
    expect(ran).toEqual([0, 1, 2]);
    await loop.turn();
    expect(ran).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('lets the timers of the process run between the slices of a long queue (real event loop)', async () => {
    const slices = new LoopSlices({ budgetMs: 2 });
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        /* a slice of synchronous work */
      }
    };
    let released = 0;
    const releasedAtTimer: number[] = [];
    const timer = setInterval(() => releasedAtTimer.push(released), 0);
    await Promise.all(
      Array.from({ length: 40 }, () =>
        slices.next().then(() => {
          busy(0.5);
          released++;
        }),
      ),
    );
    clearInterval(timer);
    // 40 slices of 0.5 ms at 2 ms per loop turn: the timer ran while they were still being released
    expect(releasedAtTimer.some((n) => n > 0 && n < 40)).toBe(true);
  });

  it('releases the callers of `first` before the callers of `next()` that waited longer', async () => {
    const loop = manualLoop();
    const slices = new LoopSlices({ budgetMs: 4, now: () => 0, schedule: loop.schedule });
    const order: string[] = [];
    const waits = [slices.next().then(() => order.push('turn 1')), slices.next().then(() => order.push('turn 2')), slices.first.next().then(() => order.push('prompt 1')), slices.first.next().then(() => order.push('prompt 2'))];
    expect(slices.waiting).toBe(4);
    await loop.turn();
    await Promise.all(waits);
    expect(order).toEqual(['prompt 1', 'prompt 2', 'turn 1', 'turn 2']);
  });

  it('gives `first` its share of a loop turn while `next()` waits, then the rest of the budget to `next()`, then the rest back to `first`', async () => {
    const loop = manualLoop();
    let clock = 0;
    const slices = new LoopSlices({ budgetMs: 4, firstShare: 0.5, now: () => clock, schedule: loop.schedule });
    const ran: string[] = [];
    const slice = (name: string) => () => {
      clock += 1;
      ran.push(name);
    };
    for (let i = 0; i < 2; i++) void slices.next().then(slice(`t${i}`));
    for (let i = 0; i < 6; i++) void slices.first.next().then(slice(`p${i}`));
    await loop.turn();
    // 2 ms of prompts (half of 4), then the turns' 2 ms
    expect(ran).toEqual(['p0', 'p1', 't0', 't1']);
    await loop.turn();
    // no turn waits: the whole budget to the prompts
    expect(ran).toEqual(['p0', 'p1', 't0', 't1', 'p2', 'p3', 'p4', 'p5']);
    expect(loop.pending()).toBe(0);
  });

  it('refuses a budget that is not a positive number, and a share of `first` outside 0..1', () => {
    expect(() => new LoopSlices({ budgetMs: 0 })).toThrow(/budgetMs/);
    expect(() => new LoopSlices({ budgetMs: Number.NaN })).toThrow(/budgetMs/);
    expect(() => new LoopSlices({ firstShare: 1.5 })).toThrow(/firstShare/);
    expect(() => new LoopSlices({ firstShare: Number.NaN })).toThrow(/firstShare/);
  });
});

describe('a runtime with a turn gate', () => {
  it('waits at the gate after the claim is durable, after the step is durable and once the model answered, and logs the same turn', async () => {
    const run = async (turnGate: LoopGate | undefined) => {
      const store = new MemoryEventStore();
      const runtime = createRuntime({
        store,
        model: new ScriptedModel([], { whenExhausted: 'ok' }),
        clock: steppingClock(),
        ids: sequentialIds(),
        logger: silentLogger,
        ...(turnGate ? { turnGate } : {}),
      });
      const agent = runtime.createSession({ sessionId: 's' });
      agent.followup(msg('A'));
      agent.followup(msg('B'));
      await agent.whenIdle();
      await agent.checkpoint();
      return agent.events.map((e) => `${e.type}${e.type === 'turn/start' ? (e.data as { turn: number }).turn : ''}`);
    };
    const waits: string[] = [];
    const slices = new LoopSlices();
    const counting: LoopGate = {
      next: () => {
        waits.push('next');
        return slices.next();
      },
    };
    const gated = await run(counting);
    // two turns (A, then B), each waiting three times: after its claim's checkpoint, after its step's and once the
    // model answered (the appends that follow an answer run in the session's slice, not in the model's callback)
    expect(waits).toHaveLength(6);
    expect(gated).toEqual(await run(undefined));
    expect(gated.filter((t) => t.startsWith('turn/start'))).toEqual(['turn/start1', 'turn/start2']);
  });
});
