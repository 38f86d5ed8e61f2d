import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import type { LogEvent } from '../../../domain/events.js';
import { installFor, resumedSegments, runResumedSession } from '../../support/resumed-session.js';

/**
 * The resumed-session properties of replay-check-resume.test.ts at a larger number of runs (about 25 s of a worker
 * each): `npm run test:e2e`, not `npm test`.
 */
describe('replayCheck of resumed sessions, many runs', () => {
  for (const resumes of [1, 2, 3]) {
    it(`random sessions resumed ${resumes} time(s), at random points: reproduced`, async () => {
      await fc.assert(
        fc.asyncProperty(resumedSegments(resumes), async (segments) => {
          const { events } = await runResumedSession(segments);
          expect(await replayCheck(events, { install: installFor(segments[0]!.program) })).toEqual({ ok: true, events: events.length });
        }),
        { numRuns: 80 },
      );
    }, 300_000);
  }

  it('a resumed session mutated after a resume: the check names the mutated event', async () => {
    await fc.assert(
      fc.asyncProperty(resumedSegments(2), fc.nat(), async (segments, pick) => {
        const { events, starts } = await runResumedSession(segments);
        const candidates = events.map((e, i) => [e, i] as const).filter(([e, i]) => i >= starts[1]! && e.type === 'user/message');
        fc.pre(candidates.length > 0);
        const [target, at] = candidates[pick % candidates.length]!;
        const mutated = events.map((e, i) => (i === at ? ({ ...e, data: { ...(e.data as object), content: [{ type: 'text', text: 'not what it was given' }] } } as LogEvent) : e));
        const result = await replayCheck(mutated, { install: installFor(segments[0]!.program) });
        expect(result).toMatchObject({ ok: false, divergence: { seq: at, type: 'user/message', recorded: mutated[at], produced: { type: 'user/message', data: target.data } } });
      }),
      { numRuns: 40 },
    );
  }, 300_000);
});
