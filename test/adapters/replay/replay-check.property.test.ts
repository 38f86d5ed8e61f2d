import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { enter } from '../../../runtime/hooks.js';
import { randomProgram, runRandomSession } from '../../support/random-session.js';

/** The replay check on random sessions of the property generator: today's runtime reproduces each, event for event. */
describe('replayCheck on random sessions', () => {
  it('reproduces every random session (its pre-step hook installed as the session had it)', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, async (p) => {
        const { agent } = await runRandomSession(p);
        const result = await replayCheck(agent.events, {
          install: (a) => {
            if (p.dropsOddSteering) a.on('pre-step', (c, next) => (c.step % 2 === 0 ? enter(c.messages.filter((m) => !m.id.startsWith('steer'))) : next()));
          },
        });
        expect(result).toEqual({ ok: true, events: agent.events.length });
      }),
      { numRuns: 25 },
    );
  });
});
