import * as E from 'fp-ts/lib/Either.js';
import { firstValueFrom, from, last, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { createAuditor } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { installListWorkProbe, type ListWalk } from '../../domain/inbox/list-work.js';
import { nextStepItems, nextTurnItems } from '../../domain/inbox/inbox-state.js';
import { parseEvent } from '../../domain/parse-event.js';
import { foldSession } from '../../domain/session-fold.js';
import { consumedWork, historyClassification, notifications, queueView, turnTimeline } from '../../projections/index.js';
import { createRuntime } from '../../runtime/runtime.js';
import { sessionLog } from '../../bench/support/session-log.js';

/**
 * The class guard: folding a session log whose queue holds 10,000 pending items must cost O(1) amortized per event
 * in list work, for every consumer of the fold. A probe counts every item walked by an operation whose cost grows
 * with a list (copies, compactions, general splices, full reads); a consumer that copied or re-read a list per splice
 * would walk thousands of items per event. Not timed: it counts.
 */
const PEAK = 10_000;
const EVENTS = Number(process.env.LIST_WORK_EVENTS ?? 25_000);
/** Items walked per event allowed, amortized: compactions and the one full read at the end of a report. */
const BUDGET_PER_EVENT = 4;

const envelopes = [...sessionLog(EVENTS, PEAK)];
const events: LogEvent[] = envelopes.map((env) => {
  const parsed = parseEvent(env, { expectedSeq: env.seq });
  if (E.isLeft(parsed)) throw parsed.left;
  return parsed.right;
});
const lines = envelopes.map((e) => JSON.stringify(e));

const walkedDuring = async (run: () => unknown): Promise<{ readonly total: number; readonly byKind: Partial<Record<ListWalk, number>> }> => {
  const byKind: Partial<Record<ListWalk, number>> = {};
  let total = 0;
  const remove = installListWorkProbe({
    walked: (what, items) => {
      total += items;
      byKind[what] = (byKind[what] ?? 0) + items;
    },
  });
  try {
    await run();
  } finally {
    remove();
  }
  return { total, byKind };
};

const expectAmortizedConstant = (walk: { readonly total: number; readonly byKind: object }, label: string): void => {
  const perEvent = walk.total / events.length;
  expect(perEvent, `${label}: ${walk.total} items walked over ${events.length} events (${JSON.stringify(walk.byKind)})`).toBeLessThanOrEqual(BUDGET_PER_EVENT);
};

describe('list work per event with 10,000 pending items (the fold is O(1) amortized per event for every consumer)', () => {
  it('the log really holds 10,000 pending items at its peak', () => {
    const { state, error } = foldSession(events);
    expect(error).toBeNull();
    expect(nextTurnItems(state.inbox).length + nextStepItems(state.inbox).length).toBeGreaterThan(PEAK * 0.9);
  });

  it('the session fold (stepSession over the whole log)', async () => {
    expectAmortizedConstant(await walkedDuring(() => foldSession(events)), 'foldSession');
  });

  it('the audit (createAuditor over every line, then its report)', async () => {
    const walk = await walkedDuring(() => {
      const auditor = createAuditor('bench');
      for (const line of lines) auditor.push(line);
      const report = auditor.report();
      expect(report.ok).toBe(true);
    });
    expectAmortizedConstant(walk, 'audit');
  });

  it('queueView(), historyClassification(), consumedWork(), notifications() and turnTimeline() operators', async () => {
    for (const [label, op] of [
      ['queueView', queueView()],
      ['historyClassification', historyClassification()],
      ['consumedWork', consumedWork()],
      ['notifications', notifications()],
      ['turnTimeline', turnTimeline()],
    ] as const) {
      const walk = await walkedDuring(async () => {
        const final = await lastValueFrom(from(events).pipe(op as never, last()));
        if (label === 'queueView') expect((final as { items: readonly unknown[] }).items.length).toBeGreaterThan(0);
      });
      expectAmortizedConstant(walk, label);
    }
  });

  it('reading every queue snapshot costs what the rows cost, and an old snapshot still shows its own rows', async () => {
    const snapshots = await firstValueFrom(from(events.slice(0, 2_000)).pipe(queueView(), toArray()));
    const early = snapshots[10]!;
    expect(early.items.map((i) => i.id)).toEqual(Array.from({ length: 11 }, (_, i) => `m-${i}`));
  });

  // fork folds its seed with the same foldSession (covered above); its cost beyond that is appending the seed
  it('resume of the stored session (loadSession + foldSession, then the live agent)', async () => {
    const store = new MemoryEventStore();
    for (let i = 0; i < events.length; i += 5_000) {
      await store.append('big', events.slice(i, i + 5_000).map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'any');
    }
    const runtime = createRuntime({ store, model: new ScriptedModel([]), writeBatchDelayMs: 1 });
    const walk = await walkedDuring(async () => {
      const agent = await runtime.resume('big');
      expect(agent.inbox.nextTurn.length).toBeGreaterThan(0);
      await agent.dispose();
    });
    expectAmortizedConstant(walk, 'resume');
  });
});
