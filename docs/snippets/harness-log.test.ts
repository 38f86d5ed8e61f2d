import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { auditHarnessLog } from './harness-log.js';

describe('docs/audit.md: reading a harness log in code', () => {
  it('audits the shipped compressed fixture: turns, ignored types, frames', async () => {
    const { report, summary, refusal } = await auditHarnessLog(fileURLToPath(new URL('../examples/dsh/aborted-child.jsonl.zst', import.meta.url)));
    expect(refusal).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.turns.map((t) => [t.turn, t.reason, t.claimed])).toEqual([
      [1, 'aborted', ['P', 'R']],
      [2, 'completed', ['N']],
    ]);
    expect(summary).toMatchObject({ compression: 'zstd', frames: 5, tornTail: null });
    expect(summary.ignored).toEqual([
      { type: 'assistant/chunk', count: 4 },
      { type: 'subagent/start', count: 1 },
      { type: 'subagent/end', count: 1 },
    ]);
  });
});
