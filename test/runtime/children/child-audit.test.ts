import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { auditLines } from '../../../domain/audit.js';
import { childRecords } from '../../../projections/session/child-records.js';
import { historyClassification } from '../../../projections/session/builtins.js';
import { childSetup } from './child-harness.js';
import { until, userMessageIds } from './support.js';

describe('children in the audit and the projections', () => {
  it('the parent\'s audit lists each child with its epochs, reports and settlements; relayed messages are context; the child\'s audit names its parent', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.model.script(c1, { toolCalls: [{ callId: 'r1', name: 'report', arguments: { output: 'progress' } }] }, 'finished');
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await until(() => h.manager.state(c1) === 'absent');
    await h.manager.followup(h.parent, c1, 'again');
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    const events = h.parent.events;
    const report = auditLines(h.parent.sessionId, events.map((e) => JSON.stringify(e)));
    expect(report.ok).toBe(true);
    const seqOf = (type: string, n = 0) => events.filter((e) => e.type === type)[n]!.seq;
    const insertedSeq = (kind: string) =>
      events.filter((e) => e.type === 'agent/inbox/spliced' && (e.data as { inserted: { source: { kind: string } }[] }).inserted.some((m) => m.source.kind === kind)).map((e) => e.seq);
    const [reportSeq] = insertedSeq('subagent-report');
    const settledSeqs = insertedSeq('subagent-settled');
    expect(report.children).toEqual([
      {
        childSessionId: c1,
        mode: 'continuable',
        epochs: [
          { epoch: 1, runId: expect.any(String), startSeq: seqOf('subagent/start'), endSeq: seqOf('subagent/end'), stopReason: 'completed' },
          { epoch: 2, runId: expect.any(String), startSeq: seqOf('subagent/start', 1), endSeq: seqOf('subagent/end', 1), stopReason: 'completed' },
        ],
        reports: [{ seq: reportSeq, messageId: expect.any(String) }],
        settlements: settledSeqs.map((seq) => ({ seq, messageId: expect.any(String) })),
      },
    ]);
    // every message a child sent is context in the history classification
    const ids = userMessageIds(h.parent);
    expect(report.messages.map((m) => [m.id, m.class])).toEqual(ids.map((id) => [id, 'context']));
    const classified = await lastValueFrom(from(events).pipe(historyClassification(), toArray()));
    expect(classified.map((c) => c.class)).toEqual(ids.map(() => 'context'));
    // the projection over the same log ends with the audit's records
    const records = await lastValueFrom(from(events).pipe(childRecords(), toArray()));
    expect(records.at(-1)).toEqual(report.children![0]);
    // the child's own audit names its parent
    const child = await h.runtime.resume(c1);
    const childReport = auditLines(c1, child.events.map((e) => JSON.stringify(e)));
    expect(childReport.lineage).toEqual({ parentSession: h.parent.sessionId, origin: 'subagent', delegationDepth: 1 });
    expect(childReport.children).toBeUndefined();
  });
});
