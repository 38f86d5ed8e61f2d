import { expect, it } from 'vitest';
import { auditLines } from '../../index.js';
import { quickstart } from './agent-quickstart.js';

it('README snippet: two turns, the steer from the tool body runs as a second step of turn 1', async () => {
  const agent = await quickstart();
  const report = auditLines(agent.sessionId, agent.events.map((e) => JSON.stringify(e)));
  expect(report.ok).toBe(true);
  expect(report.turns.map((t) => [t.turn, t.steps, t.reason])).toEqual([[1, 2, 'completed'], [2, 1, 'completed']]);
  expect(report.messages.map((m) => m.class)).toEqual(['prompt', 'steering', 'prompt']);
});

