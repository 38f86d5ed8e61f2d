import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { timelineGeometry, latencyHistogram, seqAtTime, xOf } from '../../../adapters/web/src/timeline-geometry.js';
import { createAuditor } from '../../../domain/audit.js';
import type { LogEvent } from '../../../domain/events.js';
import { parseEvent } from '../../../domain/parse-event.js';
import { sessionTimeline, type SessionTimeline } from '../../../audit/session-timeline.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const lines = readFileSync(join(ROOT, 'docs/examples/queue-steer-context.jsonl'), 'utf8').trim().split('\n');
const events: LogEvent[] = lines.map((l) => {
  const r = parseEvent(JSON.parse(l));
  if (E.isLeft(r)) throw new Error(r.left.message);
  return r.right;
});

describe('timelineGeometry: what the chart draws, checked against the log', () => {
  const tl = sessionTimeline('s', events);
  const scale = { from: events[0]!.time, to: events.at(-1)!.time, width: 1000 };
  const g = timelineGeometry(tl, scale);
  const timeOf = (type: string, match: (d: Record<string, unknown>) => boolean) => events.find((e) => e.type === type && match(e.data as Record<string, unknown>))!.time;

  it('a bar per turn and step, from its start event to its end event, on the time axis', () => {
    expect(g.aggregated).toBe(false);
    expect(g.turns.map((t) => [t.turn, t.x0, t.x1])).toEqual(
      [1, 2].map((n) => [n, xOf(timeOf('turn/start', (d) => d.turn === n), scale), xOf(timeOf('turn/end', (d) => d.turn === n), scale)]),
    );
    for (const st of g.steps) {
      expect(st.x0).toBe(xOf(timeOf('step/start', (d) => d.turn === st.turn && d.step === st.step), scale));
      expect(st.x1).toBe(xOf(timeOf('step/end', (d) => d.turn === st.turn && d.step === st.step), scale));
    }
    const tool = g.calls.find((c) => c.kind === 'tool')!;
    expect([tool.x0, tool.x1]).toEqual([xOf(timeOf('tool/call', () => true), scale), xOf(timeOf('tool/result', () => true), scale)]);
  });

  it('one admission→claim line per claimed input, coloured by the class it entered with', () => {
    const auditor = createAuditor('s');
    for (const l of lines) auditor.push(l);
    const claimed = auditor.report().turns.flatMap((t) => t.claimed);
    const drawn = g.lines.filter((l) => l.claimed);
    expect(drawn.map((l) => l.id).sort()).toEqual([...claimed].sort());
    expect(Object.fromEntries(drawn.map((l) => [l.id, l.lane]))).toEqual({ 'prompt-1': 'prompt', 'prompt-2': 'prompt', 'steer-1': 'steering', 'ctx-1': 'context' });
    const steer = drawn.find((l) => l.id === 'steer-1')!;
    expect([steer.x0, steer.x1]).toEqual([xOf(events[9]!.time, scale), xOf(events[13]!.time, scale)]);
  });

  it('a window with more turns than it can draw aggregates them into columns that count every turn', () => {
    const many: SessionTimeline = {
      ...tl,
      start: 0,
      end: 10_000 * 10,
      turns: Array.from({ length: 10_000 }, (_, k) => ({ turn: k + 1, startSeq: k * 3, start: k * 10, endSeq: k * 3 + 2, end: k * 10 + 5, reason: 'completed', steps: [] })),
      inputs: [],
      markers: [],
      depth: [],
    };
    const agg = timelineGeometry(many, { from: 0, to: 100_000, width: 800 });
    expect(agg.aggregated).toBe(true);
    expect(agg.turns).toEqual([]);
    expect(agg.buckets.reduce((n, b) => n + b.turns, 0)).toBe(10_000);
    const zoomed = timelineGeometry(many, { from: 0, to: 1_000, width: 800 });
    expect(zoomed.aggregated).toBe(false);
    expect(zoomed.turns.length).toBe(101); // starts 0…1000 inclusive
  });

  it('latency per class and the seq at a time of the axis', () => {
    // prompt-1 waited 2 ms, prompt-2 17 ms (a whole turn), steer-1 4 ms, ctx-1 2 ms
    expect(latencyHistogram(tl.inputs).map((h) => [h.cls, h.counts])).toEqual([
      ['prompt', [1, 1, 0, 0, 0, 0]],
      ['steering', [1, 0, 0, 0, 0, 0]],
      ['context', [1, 0, 0, 0, 0, 0]],
    ]);
    expect(seqAtTime(tl, events[13]!.time)).toBe(13);
    expect(seqAtTime(tl, events[0]!.time - 1)).toBe(-1);
  });
});
