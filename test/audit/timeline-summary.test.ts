import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import { sessionTimeline, type SessionTimeline } from '../../audit/session-timeline.js';
import { bucketOf, summarizeTimeline, waitEnd, type TimelineWindow } from '../../audit/timeline-summary.js';
import { inputsById, turnPage } from '../../audit/timeline-rows.js';
import { latencyHistogram } from '../../audit/timeline-measures.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const parse = (raw: unknown[]): LogEvent[] =>
  raw.map((x) => {
    const r = parseEvent(x);
    if (E.isLeft(r)) throw new Error(r.left.message);
    return r.right;
  });

const example = (name: string): unknown[] => readFileSync(join(ROOT, 'docs/examples', `${name}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown);

/** A long session like the console's 10k test's, with uneven gaps: `gaps[k]` ms before turn k + 1's prompt, and every third prompt queued a turn early. */
const longSession = (gaps: readonly number[]): unknown[] => {
  const out: unknown[] = [];
  let seq = 0;
  let t = 1_700_000_000_000;
  const push = (type: string, data: unknown, dt = 1) => {
    t += dt;
    out.push({ seq, id: `00000000-0000-4000-8000-${(seq++).toString(16).padStart(12, '0')}`, type, time: t, data });
  };
  push('session/created', { sessionId: 'long', createdAt: t, kind: 'ordinary' }, 0);
  gaps.forEach((gap, k) => {
    const turn = k + 1;
    const id = `p-${turn}`;
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } }] }, gap);
    push('turn/start', { turn }, 100);
    push('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    push('step/start', { turn, step: 1 });
    push('user/message', { id, role: 'user', content: [{ type: 'text', text: `prompt ${turn}` }], source: { kind: 'user' } });
    push('assistant/message', { turn, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] } }, 1 + (gap % 700));
    push('step/end', { turn, step: 1 });
    push('turn/end', { turn, reason: { kind: 'completed' } });
  });
  return out;
};

/** The summary's figures counted the slow way from the whole timeline's rows (what the console received before). */
const model = (tl: SessionTimeline, w: TimelineWindow) => {
  const now = tl.end ?? w.to;
  const n = w.buckets;
  const turns = tl.turns.filter((t) => (t.end ?? now) >= w.from && t.start <= w.to);
  const perBucket = Array.from({ length: n }, () => ({ turns: 0, claims: { prompt: 0, steering: 0, context: 0, claimed: 0 }, markers: 0, nextTurn: 0, nextStep: 0 }));
  for (const t of turns) perBucket[bucketOf(t.start, w)]!.turns++;
  for (const i of tl.inputs) if (i.claimed !== null && i.claimed >= w.from && i.claimed <= w.to) perBucket[bucketOf(i.claimed, w)]!.claims[i.class ?? 'claimed']++;
  for (const m of tl.markers) if (m.time >= w.from && m.time <= w.to) perBucket[bucketOf(m.time, w)]!.markers++;
  // each column's deepest: the depth it opened with (the last point before its start) and every point inside it
  perBucket.forEach((b, k) => {
    const inside = tl.depth.filter((p) => p.time >= w.from && p.time <= w.to && bucketOf(p.time, w) === k);
    const before = tl.depth.filter((p) => p.time < w.from || (p.time <= w.to && bucketOf(p.time, w) < k)).at(-1);
    for (const p of [...(before ? [before] : []), ...inside]) {
      b.nextTurn = Math.max(b.nextTurn, p.nextTurn);
      b.nextStep = Math.max(b.nextStep, p.nextStep);
    }
  });
  return { turns, perBucket, inputs: tl.inputs.filter((i) => waitEnd(i, now) >= w.from && i.admitted <= w.to) };
};

const check = (tl: SessionTimeline, w: TimelineWindow, maxTurns?: number) => {
  const s = summarizeTimeline(tl, w, maxTurns === undefined ? {} : { maxTurns });
  const m = model(tl, w);
  expect(s.buckets.map(({ turns, claims, markers, nextTurn, nextStep }) => ({ turns, claims, markers, nextTurn, nextStep }))).toEqual(m.perBucket);
  expect(s.turnsInWindow).toBe(m.turns.length);
  expect(s.spans.reduce((k, sp) => k + sp.turns, 0)).toBe(m.turns.length);
  for (const sp of s.spans) expect(sp.start <= sp.end && sp.start >= w.from && sp.end <= w.to).toBe(true);
  expect(s.latency).toEqual(latencyHistogram(tl.inputs));
  expect(s.totals).toEqual({ turns: tl.turns.length, inputs: tl.inputs.length, claimed: tl.inputs.filter((i) => i.claimed !== null).length, markers: tl.markers.length });
  expect(s.aggregated).toBe(m.turns.length > (maxTurns ?? w.buckets));
  if (s.detail) {
    expect(s.detail.turns).toEqual(m.turns);
    expect(s.detail.inputs).toEqual(m.inputs);
  }
  return s;
};

describe('summarizeTimeline: the first picture of a long session, an aggregation of the whole timeline', () => {
  const sessions: [string, SessionTimeline][] = [
    ...['queue-steer-context', 'blocked-and-dropped', 'inbox-edits'].map((name): [string, SessionTimeline] => [name, sessionTimeline(name, parse(example(name)))]),
    ['long', sessionTimeline('long', parse(longSession(Array.from({ length: 600 }, (_, k) => 200 + ((k * 7919) % 5000)))))],
  ];

  it.each(sessions)('%s: the whole session in 250 columns equals counting its rows; a short one carries its whole timeline', (_name, tl) => {
    const s = check(tl, { from: tl.start!, to: tl.end!, buckets: 250 });
    if (tl.turns.length <= 250) {
      expect(s.detail).toEqual(tl);
      expect(s.aggregated).toBe(false);
    } else expect(s.detail).toBeNull();
  });

  it('any window and column count: every figure equals the aggregation of the whole timeline (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...sessions),
        fc.double({ min: -0.1, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1.1, noNaN: true }),
        fc.integer({ min: 1, max: 400 }),
        fc.option(fc.integer({ min: 0, max: 700 }), { nil: undefined }),
        ([, tl], a, b, buckets, maxTurns) => {
          const span = tl.end! - tl.start!;
          const from = Math.round(tl.start! + a * span);
          check(tl, { from, to: Math.max(from, Math.round(tl.start! + (a + b) * span)), buckets }, maxTurns);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a long session with uneven gaps (property): columns, merged bars and depth equal the rows counted', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 20_000 }), { minLength: 1, maxLength: 300 }), fc.integer({ min: 1, max: 300 }), (gaps, buckets) => {
        const tl = sessionTimeline('long', parse(longSession(gaps)));
        check(tl, { from: tl.start!, to: tl.end!, buckets });
      }),
      { numRuns: 60 },
    );
  });
});

describe('turnPage: the turn list a page at a time, the same rows as the audit', () => {
  const raw = longSession(Array.from({ length: 600 }, (_, k) => 100 + k));
  const tl = sessionTimeline('long', parse(raw));
  const auditor = createAuditor('long');
  for (const e of raw) auditor.pushValue(structuredClone(e));
  const report = auditor.report();
  const cases: [string, unknown[]][] = [['long', raw], ...['queue-steer-context', 'blocked-and-dropped', 'inbox-edits'].map((n): [string, unknown[]] => [n, example(n)])];

  it.each(cases)("%s: pages put together are `audit --json`'s turns (seqs, reason, steps, claims)", (name, events) => {
    const t = sessionTimeline(name, parse(events));
    const a = createAuditor(name);
    for (const e of events) a.pushValue(structuredClone(e));
    const rows = [0, 1, 2, 3].flatMap((p) => turnPage(t, p * 7, p * 7 + 7).rows).concat(turnPage(t, 28, 10_000).rows);
    expect(rows.map((r) => ({ turn: r.turn, startSeq: r.startSeq, endSeq: r.endSeq, reason: r.reason, steps: r.steps, claimed: r.claimed.map((c) => c.id).sort() }))).toEqual(
      a.report().turns.map((r) => ({ turn: r.turn, startSeq: r.startSeq, endSeq: r.endSeq, reason: r.reason, steps: r.steps, claimed: [...r.claimed].sort() })),
    );
    for (const r of rows) {
      expect(r.start).toBe((events[r.startSeq] as { time: number }).time);
      expect(r.end).toBe(r.endSeq === null ? null : (events[r.endSeq] as { time: number }).time);
    }
  });

  it('clamps a range to the turns, and knows the total', () => {
    expect(turnPage(tl, 590, 700)).toMatchObject({ total: report.turns.length, from: 590 });
    expect(turnPage(tl, 590, 700).rows.map((r) => r.turn)).toEqual([591, 592, 593, 594, 595, 596, 597, 598, 599, 600]);
    expect(turnPage(tl, 900, 1000).rows).toEqual([]);
  });

  it('inputsById: each id’s last admission, unknown ids left out', () => {
    const byId = new Map(tl.inputs.map((i) => [i.id, i]));
    expect(inputsById(tl, ['p-3', 'nope', 'p-600', 'p-3'])).toEqual([byId.get('p-3'), byId.get('p-600')]);
  });
});
