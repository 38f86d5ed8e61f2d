import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import { persistentSetValues } from '../../domain/persistent-set.js';
import { initialSessionState, stepSession, type SessionState } from '../../domain/session-fold.js';
import { ADVERSARIAL_SHAPES, adversarialLog } from '../../bench/support/adversarial-logs.js';
import { logArb } from '../projections/support/random-log.js';

/**
 * The history classification of a consumed fold (`stepSession`'s `consume`: the marks changed in place) against the
 * persistent one (a version per mark): the same class for every user/message and the same marks after every event,
 * on random valid logs and on small adversarial logs (whose ids come back once they leave the lists).
 */

const marksOf = (s: SessionState): string[] => [...persistentSetValues(s.classification.claimedFromNextStep)].sort();

/** Folds `events` both ways, comparing after each event; returns how many user/messages were classified. */
const expectSameClasses = (events: readonly LogEvent[]): number => {
  let plain = initialSessionState();
  let consumed = initialSessionState();
  const marks = consumed.classification;
  let classified = 0;
  for (const event of events) {
    const p = stepSession(plain, event);
    const c = stepSession(consumed, event, { notifications: false, consume: true });
    if (E.isLeft(p) || E.isLeft(c)) throw new Error(`seq ${event.seq}: refused`);
    expect(c.right.messageClass).toBe(p.right.messageClass);
    if (p.right.messageClass !== undefined) classified++;
    plain = p.right.state;
    consumed = c.right.state;
    // the consumed fold keeps one classification state, written in place
    expect(consumed.classification).toBe(marks);
    expect(marksOf(consumed)).toEqual(marksOf(plain));
  }
  return classified;
};

const adversarialEvents = (shape: (typeof ADVERSARIAL_SHAPES)[number]): LogEvent[] =>
  [...adversarialLog(shape, 2_000, 40)].map((env) => {
    const parsed = parseEvent(env, { expectedSeq: env.seq });
    if (E.isLeft(parsed)) throw parsed.left;
    return parsed.right;
  });

describe('history classification of a consumed fold', () => {
  it('classifies every user/message and keeps the same marks as the persistent fold, on random valid logs', () => {
    fc.assert(
      fc.property(logArb(60), ({ events }) => {
        expectSameClasses(events);
      }),
      { numRuns: 200 },
    );
  });

  it.each(ADVERSARIAL_SHAPES)('does the same on the %s adversarial log', (shape) => {
    const classified = expectSameClasses(adversarialEvents(shape));
    if (shape === 'big-steps' || shape === 'long-turn') expect(classified).toBeGreaterThan(0);
  });
});
