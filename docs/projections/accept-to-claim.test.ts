import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent, SessionEvent } from '../../domain/events.js';
import { isProjection, runProjection } from '../../projections/index.js';
import { MemoryCheckpointStore } from '../../adapters/checkpoints/index.js';
import { ctx, LogBuilder, msg, projectionSpecification, uuidAt } from '../../testing/index.js';
import acceptToClaim, { report, type AcceptToClaimState } from './accept-to-claim.js';

const toNew = (e: LogEvent) => ({ id: e.id, type: e.type, time: e.time, data: e.data });

/** LogBuilder's clock ticks 1 ms per event; `wait` adds idle time before the next event. */
const wait = (b: LogBuilder, ms: number): void => void b.wait(ms);

const T0 = 1_700_000_000_000;

const scenario = (): LogBuilder => {
  const b = new LogBuilder('s1', T0);
  b.followup(msg('Q1')); // seq 1, t0+1
  b.followup(ctx('P1')); // seq 2, t0+2 — a plugin follow-up (source kind 'plugin')
  wait(b, 100);
  b.turnStart(); // seq 3, t0+103
  b.claimAndStep(); // claim Q1 at seq 4, t0+104 → user 103 ms
  b.steer(msg('S1')); // seq 9, t0+109
  wait(b, 10);
  b.claimAndStep(); // claim S1 at seq 10, t0+120 → user 11 ms
  b.turnEnd();
  b.followup(msg('Q2')); // t0+126
  b.do({ kind: 'remove', id: 'Q2' }); // canceled: no sample
  b.do({ kind: 'replace', id: 'P1', message: ctx('P1') }); // t0+128: P1 re-accepted
  wait(b, 1000);
  b.runTurn(); // turn/start t0+1129, claim P1 at t0+1130 → plugin 1002 ms
  return b;
};

describe('docs example: accept-to-claim projection', () => {
  // #region spec
  it('given a queued prompt, when a turn claims it after 100 idle ms, then one user sample of 102 ms', () => {
    const log = new LogBuilder().followup(msg('Q1')).wait(100); // accepted at seq 1
    const history = [...log.events];
    log.runTurn(); // turn/start, then the claim of Q1, one step, turn/end
    projectionSpecification(acceptToClaim)
      .given(history)
      .when(log.events.slice(history.length))
      .then({ sessions: { 'session-1': { seedLength: 0, 'next-turn': [], 'next-step': [] } }, samples: { user: [102] } }); // + 1 ms per event
  });
  // #endregion spec

  it('is a projection module: the default export is the projection, `report` is a named export', async () => {
    const module = (await import('./accept-to-claim.js')) as Record<string, unknown>;
    expect(isProjection(module.default)).toBe(true);
    expect(typeof module.report).toBe('function');
  });

  it('times accept → claim per source kind through the runner on the MemoryEventStore', async () => {
    const store = new MemoryEventStore();
    const checkpoints = new MemoryCheckpointStore();
    const b = scenario();
    await store.append('s1', b.events.map(toNew), 'no_stream');
    // A second session in the same store: the projection folds all streams.
    const other = new LogBuilder('s2', T0).followup(msg('X')).runTurn();
    await store.append('s2', other.events.map(toNew), 'no_stream');

    const run = runProjection(acceptToClaim, { store, checkpoints });
    await run.caughtUp;
    expect(report(run.state())).toEqual({
      plugin: { count: 1, meanMs: 1002, p50Ms: 1002, maxMs: 1002 },
      user: { count: 3, meanMs: (103 + 11 + 2) / 3, p50Ms: 11, maxMs: 103 },
    });
    await run.stop();

    // Restart: the state comes back from the checkpoint, new events continue it.
    const tail = [
      { seq: other.events.length, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [msg('Y')] } },
      { seq: other.events.length + 1, type: 'turn/start', data: { turn: 2 } },
      { seq: other.events.length + 2, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } },
    ].map((e, i) => ({ ...e, id: uuidAt(9000 + i), time: T0 + 5000 + i * 50 })) as SessionEvent[];
    await store.append('s2', tail.map(toNew), 'any');
    const resumed = runProjection(acceptToClaim, { store, checkpoints });
    await resumed.caughtUp;
    const figures = report(resumed.state() as AcceptToClaimState);
    expect(figures.user).toEqual({ count: 4, meanMs: (103 + 11 + 2 + 100) / 4, p50Ms: 11, maxMs: 103 });
    await resumed.stop();
  });

  it('skips a fork’s inherited splices: the child inbox starts empty after its seed', async () => {
    const parent = new LogBuilder('parent', T0).followup(msg('A')).followup(msg('B'));
    const seed = parent.events.slice(1);
    const child: SessionEvent[] = [
      { seq: 0, id: uuidAt(1), time: T0, type: 'session/created', data: { sessionId: 'child', createdAt: T0, kind: 'ordinary', parentSession: 'parent', seedLength: seed.length } },
      ...seed.map((e, i) => ({ ...e, seq: i + 1, id: uuidAt(i + 2) }) as SessionEvent),
      { seq: seed.length + 1, id: uuidAt(seed.length + 2), time: T0 + 10, type: 'session/end-seed', data: {} },
      { seq: seed.length + 2, id: uuidAt(seed.length + 3), time: T0 + 20, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [msg('C')] } },
      { seq: seed.length + 3, id: uuidAt(seed.length + 4), time: T0 + 30, type: 'turn/start', data: { turn: 1 } },
      { seq: seed.length + 4, id: uuidAt(seed.length + 5), time: T0 + 50, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [] } },
    ] as SessionEvent[];
    const store = new MemoryEventStore();
    await store.append('child', child.map(toNew), 'no_stream');
    const run = runProjection(acceptToClaim, { store, checkpoints: new MemoryCheckpointStore(), stream: 'child' });
    await run.caughtUp;
    expect(report(run.state())).toEqual({ user: { count: 1, meanMs: 30, p50Ms: 30, maxMs: 30 } });
    await run.stop();
  });
});
