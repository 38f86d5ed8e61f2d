import { expect, it } from 'vitest';
import { auditLines } from '../../index.js';
import { badMinute } from './retry-usage.js';

it('docs/models.md snippet: two failed attempts are logged, the turn completes with the third', async () => {
  const agent = await badMinute();
  expect(agent.events.filter((e) => e.type === 'request/error').map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
  expect(agent.events.filter((e) => e.type === 'assistant/message')).toHaveLength(1);
  const report = auditLines(agent.sessionId, agent.events.map((e) => JSON.stringify(e)));
  expect(report.ok).toBe(true);
  expect(report.turns.map((t) => [t.reason, t.failedRequests?.map((f) => f.code)])).toEqual([['completed', ['rate_limit_exceeded', 'HTTP_503']]]);
});
