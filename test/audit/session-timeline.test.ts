import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { createAuditor } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { parseEvent } from '../../domain/parse-event.js';
import { sessionTimeline } from '../../audit/session-timeline.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = ['queue-steer-context', 'blocked-and-dropped', 'inbox-edits'];

const load = (name: string): { lines: string[]; events: LogEvent[] } => {
  const lines = readFileSync(join(ROOT, 'docs/examples', `${name}.jsonl`), 'utf8').trim().split('\n');
  const events = lines.map((l) => {
    const r = parseEvent(JSON.parse(l));
    if (E.isLeft(r)) throw new Error(`${name}: ${r.left.message}`);
    return r.right;
  });
  return { lines, events };
};

describe('sessionTimeline: the console chart, derived from the log', () => {
  it.each(EXAMPLES)('%s: bars start and end at their events, one admission→claim line per claimed input', (name) => {
    const { lines, events } = load(name);
    const tl = sessionTimeline(name, events);
    const of = (type: string, match: (d: Record<string, unknown>) => boolean) => events.filter((e) => e.type === type && match(e.data as Record<string, unknown>));

    // turns and steps: a bar per turn/start (step/start), from its time to its closing event's time
    expect(tl.turns.map((t) => t.turn)).toEqual(of('turn/start', () => true).map((e) => (e.data as { turn: number }).turn));
    for (const t of tl.turns) {
      expect(t.start).toBe(of('turn/start', (d) => d.turn === t.turn)[0]!.time);
      expect(t.end).toBe(of('turn/end', (d) => d.turn === t.turn)[0]?.time ?? null);
      expect(t.steps.map((s) => s.step)).toEqual(of('step/start', (d) => d.turn === t.turn).map((e) => (e.data as { step: number }).step));
      for (const s of t.steps) {
        expect(s.start).toBe(of('step/start', (d) => d.turn === t.turn && d.step === s.step)[0]!.time);
        expect(s.end).toBe(of('step/end', (d) => d.turn === t.turn && d.step === s.step)[0]?.time ?? null);
        for (const c of s.calls) {
          if (c.kind !== 'tool') continue;
          expect(c.start).toBe(of('tool/call', (d) => d.callId === c.callId)[0]!.time);
          expect(c.end).toBe(of('tool/result', (d) => (d.message as { callId: string }).callId === c.callId)[0]?.time ?? null);
        }
      }
    }

    // the claims: per turn, exactly the ids the auditor (another fold) says the turn claimed
    const auditor = createAuditor(name);
    for (const l of lines) auditor.push(l);
    const report = auditor.report();
    const lines_ = tl.inputs.filter((i) => i.claimed !== null);
    expect(lines_.length).toBe(report.turns.reduce((n, t) => n + t.claimed.length, 0));
    for (const t of report.turns) expect(lines_.filter((i) => i.turn === t.turn).map((i) => i.id).sort()).toEqual([...t.claimed].sort());
    for (const i of lines_) {
      expect(i.admitted).toBe(events[i.admittedSeq]!.time);
      expect(i.claimed).toBe(events[i.claimedSeq!]!.time);
      expect(i.claimedSeq!).toBeGreaterThanOrEqual(i.admittedSeq);
    }
    // what still waits is what the auditor's inbox holds, and the last depth point counts it
    const waiting = tl.inputs.filter((i) => i.outcome === 'waiting');
    expect(waiting.filter((i) => i.target === 'next-turn').map((i) => i.id)).toEqual(report.inbox.nextTurn);
    expect(waiting.filter((i) => i.target === 'next-step').map((i) => i.id)).toEqual(report.inbox.nextStep);
    const last = tl.depth.at(-1) ?? { nextTurn: 0, nextStep: 0 };
    expect([last.nextTurn, last.nextStep]).toEqual([report.inbox.nextTurn.length, report.inbox.nextStep.length]);
    expect(tl.start).toBe(events[0]!.time);
    expect(tl.end).toBe(events.at(-1)!.time);
  });

  it('queue-steer-context: the steer enters as steering, the plugin input as context, with their texts', () => {
    const tl = sessionTimeline('s', load('queue-steer-context').events);
    const byId = new Map(tl.inputs.map((i) => [i.id, i]));
    expect(byId.get('steer-1')).toMatchObject({ class: 'steering', text: 'Only the failing tests, please', target: 'next-step', outcome: 'claimed', turn: 1 });
    expect(byId.get('prompt-1')).toMatchObject({ class: 'prompt', text: 'Summarize the build log', admittedSeq: 1, claimedSeq: 3 });
    expect(byId.get('prompt-3')?.outcome).toBe('waiting');
  });
});
