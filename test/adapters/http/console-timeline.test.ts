import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import type { SessionTimeline, TimelineInput } from '../../../audit/session-timeline.js';
import { summarizeTimeline, type TimelineSummary } from '../../../audit/timeline-summary.js';
import { turnPage, type TurnPage } from '../../../audit/timeline-rows.js';
import { seqAtTime } from '../../../audit/timeline-measures.js';
import type { SessionAudit } from '../../../host/session-audit.js';
import { AUDIT_LISTS, auditHead, type AuditRowsPage, type SessionAuditHead } from '../../../host/session-audit-rows.js';
import { startTestHost, type TestHost } from './http-support.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** A session of `turns` turns, one every 1.5 s (the 10k browser test's shape). */
const manyTurns = (sessionId: string, turns: number) => {
  const out: { id: string; type: string; time: number; data: unknown }[] = [];
  let seq = 0;
  const t0 = 1_700_000_000_000;
  const push = (type: string, data: unknown, at: number) => out.push({ id: `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`, type, time: t0 + at, data });
  push('session/created', { sessionId, createdAt: t0, kind: 'ordinary' }, 0);
  for (let turn = 1; turn <= turns; turn++) {
    const at = turn * 1500;
    const id = `p-${turn}`;
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } }] }, at);
    push('turn/start', { turn }, at + 100);
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] }, at + 101);
    push('step/start', { turn, step: 1 }, at + 102);
    push('user/message', { id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } }, at + 103);
    push('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] } }, at + 600);
    push('step/end', { turn, step: 1 }, at + 601);
    push('turn/end', { turn, reason: { kind: 'completed' } }, at + 602);
  }
  return out;
};

let host: TestHost | null = null;
afterEach(async () => {
  await host?.close();
  host = null;
});

const get = async <T,>(path: string, status = 200): Promise<T> => {
  const res = await fetch(`${host!.url}${path}`);
  expect(res.status, path).toBe(status);
  return (await res.json()) as T;
};

describe("the timeline's small reads answer what the whole timeline holds", () => {
  it('summary, turn pages, inputs and seq-at-time for a 300-turn session and the example, from one derivation', async () => {
    const store = new MemoryEventStore();
    await store.append('long-1', manyTurns('long-1', 300), 'no_stream');
    const example = readFileSync(join(ROOT, 'docs/examples/queue-steer-context.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; type: string; time: number; data: { sessionId?: string } });
    const exampleId = example[0]!.data.sessionId!;
    await store.append(exampleId, example.map((e) => ({ id: e.id, type: e.type, time: e.time, data: e.data })), 'no_stream');
    host = await startTestHost({ store });

    const whole = await get<SessionTimeline>('/api/timeline/long-1');
    const summary = await get<TimelineSummary>('/api/timeline-summary/long-1');
    expect(summary).toEqual(summarizeTimeline(whole, { from: whole.start!, to: whole.end!, buckets: 250 }));
    expect(summary.aggregated).toBe(true);
    expect(summary.buckets.reduce((n, b) => n + b.turns, 0)).toBe(300);
    expect(JSON.stringify(summary).length).toBeLessThan(JSON.stringify(whole).length / 4);
    const zoomed = await get<TimelineSummary>(`/api/timeline-summary/long-1?from=${whole.start! + 30_000}&to=${whole.start! + 60_000}&buckets=100`);
    expect(zoomed).toEqual(summarizeTimeline(whole, { from: whole.start! + 30_000, to: whole.start! + 60_000, buckets: 100 }));
    expect(zoomed.aggregated).toBe(false);
    expect(zoomed.detail!.turns.map((t) => t.turn)).toEqual(whole.turns.filter((t) => t.end! >= whole.start! + 30_000 && t.start <= whole.start! + 60_000).map((t) => t.turn));

    // the turn list's pages, put together, are the audit's turns
    const pages: TurnPage[] = [];
    for (let from = 0; from < 300; from += 120) pages.push(await get<TurnPage>(`/api/timeline-turns/long-1?from=${from}&to=${from + 120}`));
    expect(pages.every((p) => p.total === 300)).toBe(true);
    const rows = pages.flatMap((p) => p.rows);
    expect(rows).toEqual(turnPage(whole, 0, 300).rows);
    const audit = await get<SessionAudit>('/api/audit/long-1');
    expect(rows.map((r) => [r.turn, r.startSeq, r.endSeq, r.reason, r.steps, r.claimed.map((c) => c.id)])).toEqual(audit.report.turns.map((t) => [t.turn, t.startSeq, t.endSeq, t.reason, t.steps, t.claimed]));

    // the fold without its long lists, and their rows a page at a time, at the head's seq
    const head = await get<SessionAuditHead>('/api/audit/long-1?rows=head&at=1200');
    const full = await get<SessionAudit>('/api/audit/long-1?at=1200');
    expect(head).toEqual(auditHead(full));
    for (const list of AUDIT_LISTS) {
      const got: unknown[] = [];
      for (let from = 0; from < head.counts[list]; from += 70) got.push(...(await get<AuditRowsPage>(`/api/audit-rows/long-1?at=1200&list=${list}&from=${from}&to=${from + 70}`)).rows);
      expect(got, list).toEqual(list === 'messages' ? full.report.messages : full[list]);
    }
    expect(head.counts.messages).toBeGreaterThan(70);

    const inputs = await get<{ inputs: TimelineInput[] }>('/api/timeline-inputs/long-1?id=p-7&id=p-300&id=nope');
    expect(inputs.inputs).toEqual(whole.inputs.filter((i) => i.id === 'p-7' || i.id === 'p-300'));
    for (const t of [whole.start! - 1, whole.start!, whole.start! + 20_250, whole.end!]) {
      expect((await get<{ seq: number }>(`/api/timeline-seq/long-1?time=${t}`)).seq).toBe(seqAtTime(whole, t));
    }

    // a short session's summary carries its whole timeline: the console draws it without another request
    const exampleWhole = await get<SessionTimeline>(`/api/timeline/${exampleId}`);
    expect((await get<TimelineSummary>(`/api/timeline-summary/${exampleId}`)).detail).toEqual(exampleWhole);
  });

  it('refuses what it cannot answer', async () => {
    host = await startTestHost();
    await get('/api/timeline-summary/nobody', 404);
    await get('/api/timeline-turns/nobody?from=0&to=10', 404);
    await get('/api/timeline-summary/x?buckets=0', 400);
    await get('/api/timeline-summary/x?buckets=5000', 400);
    await get('/api/timeline-summary/x?from=abc', 400);
    await get('/api/timeline-turns/x?from=0&to=5000', 400);
    await get('/api/timeline-turns/x?from=-1&to=3', 400);
    await get('/api/timeline-seq/x', 400);
    await get('/api/audit-rows/x?at=0&list=turns&from=0&to=10', 400);
    await get('/api/audit-rows/x?list=inputs&from=0&to=10', 400);
    await get('/api/audit-rows/x?at=0&list=inputs&from=0&to=2000', 400);
    await get('/api/audit-rows/nobody?at=0&list=inputs&from=0&to=10', 404);
    await get(`/api/timeline-inputs/x?${Array.from({ length: 501 }, (_, i) => `id=m${i}`).join('&')}`, 400);
  });
});
