import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { from, lastValueFrom, toArray, type OperatorFunction } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { queueView as domainQueueView } from '../../domain/queue-view.js';
import { deriveNotifications, initialSessionState, stepSession } from '../../domain/session-fold.js';
import { eventsOnly, fromAgentLog, historyClassification, notifications, queueView } from '../../projections/index.js';
import { ctx, msg } from '../../testing/log-builder.js';
import { setup } from '../runtime/harness.js';

const run = <T>(events: readonly LogEvent[], op: OperatorFunction<LogEvent, T>): Promise<T[]> => lastValueFrom(from(events).pipe(op, toArray()));
type Send = 'followup' | 'steer' | 'inject' | 'idle' | 'tool';

/** A session produced by the real driver: sends from the top level and from a tool body, with tool rounds. */
const driverSession = async (sends: readonly Send[]) => {
  let n = 0;
  let toolRounds = 0;
  const h = setup({
    whenExhausted: () => (toolRounds-- > 0 ? { toolCalls: [{ callId: `c${n++}`, name: 'act' }] } : 'ok'),
    tools: [{ name: 'act', execute: (_a, c) => (c.agent.steer(msg(`tool-steer-${n++}`)), { content: 'ok', additionalContexts: [ctx(`tool-ctx-${n++}`)] }) }],
  });
  const live: unknown[] = [];
  const sub = fromAgentLog(h.agent).pipe(eventsOnly(), notifications()).subscribe((x) => live.push(x));
  for (const s of sends) {
    if (s === 'followup') h.agent.followup(msg(`p-${n++}`));
    else if (s === 'steer') h.agent.steer(msg(`s-${n++}`));
    else if (s === 'inject') h.agent.inject(ctx(`c-${n++}`));
    else if (s === 'tool') toolRounds++;
    else await h.agent.whenIdle();
  }
  h.agent.followup(msg('final'));
  await h.agent.whenIdle();
  sub.unsubscribe();
  return { h, live };
};

describe('projections over logs from the driver', () => {
  it('notifications(), historyClassification() and queueView() equal the domain folds; the live agent source agrees with the log', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<Send>('followup', 'followup', 'steer', 'inject', 'idle', 'tool'), { minLength: 1, maxLength: 15 }), async (sends) => {
        const { h, live } = await driverSession(sends);
        const events = h.agent.events;
        const derived = deriveNotifications(events);
        expect(await run(events, notifications())).toEqual(derived);
        expect(live).toEqual(derived);

        const classes: unknown[] = [];
        const snapshots: unknown[] = [];
        let state = initialSessionState();
        for (const e of events) {
          const step = stepSession(state, e);
          if (E.isLeft(step)) throw step.left;
          state = step.right.state;
          if (step.right.messageClass) classes.push({ seq: e.seq, id: (e.data as { id: string }).id, class: step.right.messageClass });
          if (e.type === 'agent/inbox/spliced') snapshots.push({ seq: e.seq, items: domainQueueView(state.inbox) });
        }
        expect((await run(events, historyClassification())).map((c) => ({ seq: c.seq, id: c.message.id, class: c.class }))).toEqual(classes);
        expect(await run(events, queueView({ gaplessHandoff: false }))).toEqual(snapshots);
      }),
      { numRuns: 60 },
    );
  });
});
