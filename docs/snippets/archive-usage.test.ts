import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRuntime, createUserMessage, MemoryEventStore, ScriptedModel, steppingClock } from '../../index.js';
import { archiveOldSessions, verifyArchive } from './archive-usage.js';

const dir = mkdtempSync(join(tmpdir(), 'steerlog-archive-snippet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/audit.md retention snippets run', () => {
  it('archives a session that ended in October, keeps one from November, and the archive verifies', async () => {
    const store = new MemoryEventStore();
    for (const [sessionId, start] of [['case-1000', Date.parse('2026-10-02T09:00:00Z')], ['case-2000', Date.parse('2026-11-20T09:00:00Z')]] as const) {
      const runtime = createRuntime({ store, model: new ScriptedModel(['done']), clock: steppingClock(start, 10) });
      const agent = runtime.createSession({ sessionId });
      agent.followup(createUserMessage('close the ticket'));
      await agent.whenIdle();
      await agent.dispose();
    }
    const file = join(dir, 'october.jsonl.gz');
    const result = await archiveOldSessions(store, file);
    expect(result.archived.map((a) => [a.session, a.deleted])).toEqual([['case-1000', true]]);
    expect(result.kept).toEqual([{ session: 'case-2000', reason: 'recent', lastTime: expect.any(Number) }]);
    const verdicts = await verifyArchive(file);
    expect(verdicts.map((v) => [v.stream, v.ok, v.anchor?.verdict])).toEqual([['case-1000', true, 'found']]);
  });
});
