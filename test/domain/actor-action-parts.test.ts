import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { actorActionsOf, eachActorAction, eachActorActionPart, type ActorAction, type ActorActionKind } from '../../domain/actor-actions.js';
import { recordedActor } from '../../domain/event-metadata.js';
import type { LogEvent } from '../../domain/events.js';
import { initialMessageFactState, stepMessageFacts, type MessageFact } from '../../domain/message-facts.js';
import { parseEvent } from '../../domain/parse-event.js';
import { ADVERSARIAL_SHAPES, adversarialLog } from '../../bench/support/adversarial-logs.js';
import { logArb } from '../projections/support/random-log.js';

/**
 * The actions of an event three ways: as objects (`eachActorAction`, `actorActionsOf`), as parts (`eachActorActionPart`,
 * what the audit's output writes without an object per action), and by a reference written out here (the rules of
 * `actorActionsOf`'s documentation, as the function read before the parts): the same actions in the same order.
 */
const reference = (event: LogEvent, facts: readonly MessageFact[], seedLength: number | undefined): ActorAction[] => {
  if (seedLength !== undefined && event.seq >= 1 && event.seq <= seedLength) return [];
  const by = recordedActor(event.metadata);
  const a = (kind: ActorActionKind, id: string | null, turn: number | null): ActorAction => ({ seq: event.seq, time: event.time, kind, id, turn, actor: by.actor, actorKind: by.actorKind });
  switch (event.type) {
    case 'session/created': {
      if (event.seq !== 0) return [];
      const d = event.data as { seedLength?: number; origin?: string };
      return [a(d.seedLength !== undefined || d.origin === 'fork' ? 'forked' : 'created', null, null)];
    }
    case 'agent/inbox/spliced':
      return facts.flatMap((f) => (f.kind === 'admitted' || f.kind === 'edited' || f.kind === 'moved' || f.kind === 'canceled' ? [a(f.kind, f.id, null)] : []));
    case 'turn/start':
      return event.metadata?.actor !== undefined ? [a('woke', null, (event.data as { turn: number }).turn)] : [];
    case 'turn/end':
      return (event.data as { reason: { kind: string } }).reason.kind === 'aborted' ? [a('stopped', null, (event.data as { turn: number }).turn)] : [];
    case 'session/erased':
      return [a('erased', null, null)];
    default:
      return [];
  }
};

const expectSameActions = (events: readonly LogEvent[]): number => {
  let state = initialMessageFactState();
  let seedLength: number | undefined;
  let count = 0;
  for (const event of events) {
    const step = stepMessageFacts(state, event);
    if (E.isLeft(step)) throw step.left;
    state = step.right.state;
    const facts = step.right.facts;
    if (event.seq === 0 && event.type === 'session/created') seedLength = (event.data as { seedLength?: number }).seedLength;
    const objects: ActorAction[] = [];
    eachActorAction(event, facts, seedLength, (x) => void objects.push(x));
    const parts: ActorAction[] = [];
    eachActorActionPart(event, facts, seedLength, (e, kind, id, turn) => {
      const by = recordedActor(e.metadata);
      parts.push({ seq: e.seq, time: e.time, kind, id, turn, actor: by.actor, actorKind: by.actorKind });
    });
    const expected = JSON.stringify(reference(event, facts, seedLength));
    expect(JSON.stringify(objects)).toBe(expected);
    expect(JSON.stringify(parts)).toBe(expected);
    expect(JSON.stringify(actorActionsOf(event, facts, seedLength))).toBe(expected);
    count += parts.length;
  }
  return count;
};

/** Every other event gets an actor (and some an actor kind), so the actions' actors are compared too. */
const withActors = (events: readonly LogEvent[]): LogEvent[] =>
  events.map((e, i) => (i % 2 === 1 && e.metadata === undefined ? ({ ...e, metadata: { actor: `user-${i % 5}`, ...(i % 3 === 0 ? { actorKind: 'user' } : {}) } } as LogEvent) : e));

describe('actor actions as parts', () => {
  it('are the actions eachActorAction and actorActionsOf make, in order, on random valid logs', () => {
    fc.assert(
      fc.property(logArb(60), ({ events }) => {
        expectSameActions(withActors(events));
      }),
      { numRuns: 300 },
    );
  });

  it.each(ADVERSARIAL_SHAPES)('are the same on the adversarial log "%s"', (shape) => {
    const events = [...adversarialLog(shape, 3_000, 50)].map((env) => {
      const parsed = parseEvent(env, { expectedSeq: env.seq });
      if (E.isLeft(parsed)) throw parsed.left;
      return parsed.right;
    });
    expect(expectSameActions(withActors(events))).toBeGreaterThan(0);
  });
});
