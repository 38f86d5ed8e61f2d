import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StepNotFoundError, parseStepRef, stepContext } from '../../audit/step-context.js';
import { randomProgram, runRandomSession } from '../support/random-session.js';

describe('stepContext', () => {
  it('is exactly what the model received, for every request of random sessions (messages, system prompt, tools)', async () => {
    await fc.assert(
      fc.asyncProperty(randomProgram, async (p) => {
        const { agent, model } = await runRandomSession(p);
        expect(model.requests.length).toBeGreaterThan(0);
        for (const r of model.requests) {
          const c = stepContext(agent.events, r.turn, r.step);
          expect(c.messages).toEqual(r.messages);
          expect(c.header?.header.system).toBe(r.system);
          expect(c.header?.header.tools).toEqual(r.tools);
          expect(c.route).toMatchObject({ provider: 'scripted', model: 'scripted-1' });
        }
        // the attempts each step made, and what entered it, agree with the requests and the log
        for (const r of model.requests) {
          const c = stepContext(agent.events, r.turn, r.step);
          expect(c.attempts).toBe(model.requests.filter((x) => x.turn === r.turn && x.step === r.step).length);
          const entered = agent.events.filter((e) => e.seq > c.startSeq && e.seq < c.requestSeq && e.type === 'user/message').map((e) => (e.data as { id: string }).id);
          expect(c.entered.map((e) => e.id)).toEqual(entered);
          for (const e of c.entered) expect(e.class === null ? [] : e.fate.map((f) => f.kind)).toContain('entered');
        }
      }),
      { numRuns: 40 },
    );
  });

  it('names a step the log does not have; parses <turn>.<step>', () => {
    expect(() => stepContext([], 1, 1)).toThrow(StepNotFoundError);
    expect(parseStepRef('2.3')).toEqual({ turn: 2, step: 3 });
    expect(parseStepRef('0.1')).toBeNull();
    expect(parseStepRef('2')).toBeNull();
  });
});
