import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { stepContext } from '../../audit/step-context.js';
import { contextOutput, parseLogPrefix, stepRequest } from '../../audit/step-request.js';

// The console's step request (GET /api/context) from events as read: the valid prefix, then stepContext, and the
// same refusals as `steerlog context` (no such step; the log turns invalid before the step's request).

const lines = readFileSync(fileURLToPath(new URL('../../docs/examples/queue-steer-context.jsonl', import.meta.url)), 'utf8').split('\n').filter(Boolean);
const raw = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
const steps = raw().flatMap((e) => (e.type === 'step/start' ? [e.data as { turn: number; step: number }] : []));

describe('stepRequest', () => {
  it('answers stepContext of the parsed log, as context --json prints it, for every step', () => {
    const log = parseLogPrefix(raw());
    expect(log.error).toBeNull();
    expect(steps.length).toBe(3);
    for (const { turn, step } of steps) expect(stepRequest(log, turn, step)).toEqual(E.right(contextOutput(stepContext(log.events, turn, step))));
    expect(stepRequest(log, 9, 1)).toEqual(E.left({ kind: 'step-not-found', turn: 9, step: 1, message: 'the log has no step 9.1' }));
  });

  it('a log invalid before a step: earlier steps are answered, that one is refused naming the first invalid event', () => {
    const events = raw();
    const last = steps.at(-1)!;
    const at = events.findIndex((e) => e.type === 'step/start' && (e.data as { turn: number }).turn === last.turn && (e.data as { step: number }).step === last.step);
    events[at] = { ...events[at], type: 'no/such-event' };
    const log = parseLogPrefix(events);
    expect(log.events.length).toBe(at);
    expect(log.error?.seq).toBe(at);
    expect(E.isRight(stepRequest(log, steps[0]!.turn, steps[0]!.step))).toBe(true);
    const refused = stepRequest(log, last.turn, last.step);
    expect(E.isLeft(refused) && refused.left.kind).toBe('invalid-before');
    expect(E.isLeft(refused) && refused.left.message).toMatch(new RegExp(`^the log is invalid before step ${last.turn}\\.${last.step}'s request: seq ${at}`));
  });
});
