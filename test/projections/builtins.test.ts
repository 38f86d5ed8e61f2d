import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { from, lastValueFrom, share, toArray, zip, type OperatorFunction } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { foldConsumedWork } from '../../domain/consumed-work.js';
import type { InboxSplicedData, LogEvent } from '../../domain/events.js';
import { isImpossibleEventError } from '../../domain/errors.js';
import { queueView as domainQueueView } from '../../domain/queue-view.js';
import { deriveNotifications, foldSession, initialSessionState, stepSession } from '../../domain/session-fold.js';
import { evolveTurns, initialTurnFoldState } from '../../domain/turns.js';
import {
  classificationFrames,
  consumedWork,
  historyClassification,
  notifications,
  queueFrames,
  queueView,
  sessionSteps,
  turnTimeline,
} from '../../projections/index.js';
import { logArb } from './support/random-log.js';

const run = <T>(events: readonly LogEvent[], op: OperatorFunction<LogEvent, T>): Promise<T[]> => lastValueFrom(from(events).pipe(op, toArray()));
const RUNS = { numRuns: 200 };

describe('built-in projections equal the pure domain folds over random valid logs', () => {
  it('notifications() equals deriveNotifications and what the live deciders emitted', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ builder, events }) => {
        const out = await run(events, notifications());
        expect(out).toEqual(deriveNotifications(events));
        expect(out).toEqual(builder.notifications);
      }),
      RUNS,
    );
  });

  it('historyClassification() equals stepSession’s messageClass for every user/message', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ events }) => {
        const expected: { seq: number; id: string; class: string }[] = [];
        let state = initialSessionState();
        for (const e of events) {
          const step = stepSession(state, e);
          if (E.isLeft(step)) throw step.left;
          if (step.right.messageClass) expected.push({ seq: e.seq, id: (e.data as { id: string }).id, class: step.right.messageClass });
          state = step.right.state;
        }
        const out = await run(events, historyClassification());
        expect(out.map((c) => ({ seq: c.seq, id: c.message.id, class: c.class }))).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('consumedWork() emits exactly when foldConsumedWork over the prefix changes, with its value', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ events }) => {
        const expected: unknown[] = [];
        let previous = foldConsumedWork([]);
        for (let i = 0; i < events.length; i++) {
          const now = foldConsumedWork(events.slice(0, i + 1));
          if (now.end?.seq !== previous.end?.seq || now.droppedUnrun !== previous.droppedUnrun) expected.push({ seq: events[i]!.seq, ...now });
          previous = now;
        }
        expect(await run(events, consumedWork())).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('turnTimeline() lists turn starts, step starts and turn ends equal to the turn fold, with the ids each turn claimed', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ builder, events }) => {
        const out = await run(events, turnTimeline());
        let turns = initialTurnFoldState();
        const expected: unknown[] = [];
        for (const e of events) {
          const next = evolveTurns(turns, e);
          if (E.isLeft(next)) throw next.left;
          turns = next.right;
          if (e.type === 'turn/start') expected.push({ kind: 'turn-started', seq: e.seq, turn: turns.openTurn!.turn });
          if (e.type === 'step/start') expected.push({ kind: 'step-started', seq: e.seq, turn: turns.openTurn!.turn, step: turns.openStep });
          if (e.type === 'turn/end') {
            const claimed = builder.notifications.filter((n) => n.type === 'agent/inbox/claimed' && n.turn === turns.lastClosed!.turn).map((n) => n.message.id);
            expected.push({ kind: 'turn-ended', seq: e.seq, record: { ...turns.lastClosed!, claimed } });
          }
        }
        expect(out).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('queueView({gaplessHandoff:false}) emits the domain queueView of the folded inbox after every splice', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ builder, events }) => {
        const out = await run(events, queueView({ gaplessHandoff: false }));
        const splices = events.filter((e) => e.type === 'agent/inbox/spliced');
        expect(out.map((f) => f.seq)).toEqual(splices.map((e) => e.seq));
        for (const frame of out) {
          expect(frame.items).toEqual(domainQueueView(foldSession(events.slice(0, frame.seq + 1)).state.inbox));
        }
        expect(out.at(-1)?.items ?? []).toEqual(domainQueueView(builder.inbox));
      }),
      { numRuns: 100 },
    );
  });

  it('queueView() is the domain snapshot plus the claimed steering rows still awaiting their user/message (oracle model)', async () => {
    await fc.assert(
      fc.asyncProperty(logArb(), async ({ events }) => {
        const out = await run(events, queueView());
        // Oracle: a user-source item claimed from next-step stays (claimed) until a user/message with its id, or turn/end.
        let awaiting: string[] = [];
        let state = initialSessionState();
        const expected: { seq: number; ids: string[] }[] = [];
        for (const e of events) {
          const before = state;
          const step = stepSession(before, e);
          if (E.isLeft(step)) throw step.left;
          state = step.right.state;
          const pending = domainQueueView(state.inbox);
          const withAwaiting = (): string[] => {
            const queued = pending.filter((p) => p.placement === 'queued').map((p) => `${p.id}:queued`);
            const rest = pending.filter((p) => p.placement !== 'queued').map((p) => `${p.id}:${p.placement}`);
            return [...queued, ...awaiting.map((id) => `${id}:steering*`), ...rest];
          };
          if (e.type === 'agent/inbox/spliced') {
            const d = e.data as InboxSplicedData;
            awaiting = awaiting.filter((id) => !d.inserted.some((m) => m.id === id));
            if (d.target === 'next-step' && d.removedCount && d.outcome !== 'canceled') {
              const removed = domainQueueView(before.inbox).filter((p) => p.placement !== 'queued').slice(d.start, d.start + d.removedCount);
              awaiting.push(...removed.filter((p) => p.message.source.kind === 'user').map((p) => p.id));
            }
            expected.push({ seq: e.seq, ids: withAwaiting() });
          } else if (e.type === 'user/message' && awaiting.includes((e.data as { id: string }).id)) {
            const id = (e.data as { id: string }).id;
            awaiting.splice(awaiting.indexOf(id), 1);
            expected.push({ seq: e.seq, ids: withAwaiting() });
          } else if (e.type === 'turn/end' && awaiting.length > 0) {
            awaiting = [];
            expected.push({ seq: e.seq, ids: withAwaiting() });
          }
        }
        expect(out.map((f) => ({ seq: f.seq, ids: f.items.map((i) => `${i.id}:${i.placement}${i.claimed ? '*' : ''}`) }))).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('random logs exercise the handoff: claimed steering rows retire at their user/message and at turn/end', async () => {
    let atMessage = 0;
    let atTurnEnd = 0;
    for (const { events } of fc.sample(logArb(), { numRuns: 200, seed: 42 })) {
      const frames = await run(events, queueView());
      for (const f of frames) {
        const e = events[f.seq]!;
        if (e.type === 'user/message') atMessage++;
        if (e.type === 'turn/end') atTurnEnd++;
      }
    }
    expect(atMessage).toBeGreaterThan(10);
    expect(atTurnEnd).toBeGreaterThan(10);
  });

  it('one shared fold feeds several projections with the same results as separate pipelines', async () => {
    const { events } = fc.sample(logArb(60), { numRuns: 1, seed: 7 })[0]!;
    const steps$ = from(events).pipe(sessionSteps(), share());
    const both = lastValueFrom(zip(steps$.pipe(queueFrames(), toArray()), steps$.pipe(classificationFrames(), toArray())));
    const [frames, classes] = await both;
    expect(frames).toEqual(await run(events, queueView()));
    expect(classes).toEqual(await run(events, historyClassification()));
  });

  it('an impossible event errors the Observable with the domain’s typed error', async () => {
    const { events } = fc.sample(logArb(10), { numRuns: 1, seed: 3 })[0]!;
    const broken = [...events, { ...events[0]!, seq: events.length, type: 'step/end', data: { turn: 99, step: 1 } } as LogEvent];
    await expect(run(broken, queueView())).rejects.toSatisfy(isImpossibleEventError);
  });
});
