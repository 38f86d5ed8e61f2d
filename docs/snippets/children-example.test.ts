import { describe, expect, it } from 'vitest';
import { isKnownEvent } from '../../domain/events.js';
import { childrenExample } from './children-example.js';

describe('docs/children.md example', () => {
  it('starts a child, gets its report then its settlement, and resumes it for a follow-up', async () => {
    const { parent, childSessionId } = await childrenExample();
    const known = parent.events.filter(isKnownEvent);
    const edges = known.flatMap((e) => (e.type === 'subagent/start' || e.type === 'subagent/end' ? [`${e.type}:${e.data.epoch}`] : []));
    expect(edges).toEqual(['subagent/start:1', 'subagent/end:1', 'subagent/start:2', 'subagent/end:2']);
    const received = known
      .flatMap((e) => (e.type === 'user/message' ? [e.data] : []))
      .map((m) => `${m.source.kind}: ${m.content[0]?.type === 'text' ? m.content[0].text.split('\n')[0] : ''}`);
    expect(received).toEqual([
      `subagent-report: Background subagent ${childSessionId} reported:`,
      `subagent-settled: Background subagent ${childSessionId} completed its work.`,
      `subagent-settled: Background subagent ${childSessionId} completed its work.`,
    ]);
  });
});
