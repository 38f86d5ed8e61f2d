import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditLines } from '../../../domain/audit.js';

/**
 * Hand-derived expectations for every example in docs/examples, beside the golden reports (which the implementation
 * writes and examples.test.ts compares byte for byte). Each expectation below was worked out by reading the example's
 * log event by event — which splice claims what, where each turn starts and ends, which claim marks steering — not
 * by running the audit. Two per example: the verdict with turns and message classes, and the pending state.
 */

const audit = (name: string) => {
  const text = readFileSync(new URL(`../../../docs/examples/${name}.jsonl`, import.meta.url), 'utf8');
  return auditLines(name, text.split('\n').filter((l) => l !== ''));
};
const turn = (n: number, startSeq: number, endSeq: number | null, reason: string | null, steps: number, claimed: string[]) => ({ turn: n, startSeq, endSeq, reason, steps, claimed });

interface ByHand {
  readonly verdict: { events: number; ok: boolean; errors: { seq: number; code: string }[]; turns: ReturnType<typeof turn>[]; messages: { seq: number; id: string; class: string }[] };
  readonly pending: { inbox: { nextTurn: string[]; nextStep: string[] }; queue: { id: string; placement: string }[]; consumedWork: { endSeq: number | null; endTurn: number | null; droppedUnrun: boolean } };
}

const EXAMPLES: Record<string, ByHand> = {
  // 1 queues "ok"; turn 1 (2–8) claims it at 3 and runs one step (user/message at 5). 9, 10 queue "secret", "later";
  // turn 2 (11–13) claims "secret" at 12 and is blocked before any step. 14 cancels "later": unrun work dropped
  // after the last accounting turn/end (13).
  'blocked-and-dropped': {
    verdict: { events: 15, ok: true, errors: [], turns: [turn(1, 2, 8, 'completed', 1, ['ok']), turn(2, 11, 13, 'blocked', 0, ['secret'])], messages: [{ seq: 5, id: 'ok', class: 'prompt' }] },
    pending: { inbox: { nextTurn: [], nextStep: [] }, queue: [], consumedWork: { endSeq: 13, endTurn: 2, droppedUnrun: true } },
  },
  // next-turn: [A,B] → cancel B → [A] → B back at 1 → C at 1: [A,C,B]; next-step: [X,Y(plugin)]; 6 replaces A by A2,
  // 7 replaces X (same id, edited), 8 cancels Y. Turn 1 (9–23) claims X from next-step at 10 (a steering mark), then
  // the next-turn head A2 at 11; user/messages X (13, steering) and A2 (14, prompt). Step 1 calls a tool (16); while it
  // runs, 17 cancels C and B (the next-step splice finds nothing: no event); step 2 (20–22) takes nothing; nothing is
  // pending when turn 1 ends (23), so nothing is dropped unrun.
  'inbox-edits': {
    verdict: { events: 24, ok: true, errors: [], turns: [turn(1, 9, 23, 'completed', 2, ['X', 'A2'])], messages: [{ seq: 13, id: 'X', class: 'steering' }, { seq: 14, id: 'A2', class: 'prompt' }] },
    pending: { inbox: { nextTurn: [], nextStep: [] }, queue: [], consumedWork: { endSeq: 23, endTurn: 1, droppedUnrun: false } },
  },
  // Turn 1 (2–8) runs A. 9 queues B in next-turn; 10 inserts B again into next-step while it is pending: refused,
  // so 10 events (0–9) are applied and B stays queued; nothing is dropped.
  'invalid-duplicate-pending-id': {
    verdict: { events: 10, ok: false, errors: [{ seq: 10, code: 'duplicate-pending-id' }], turns: [turn(1, 2, 8, 'completed', 1, ['A'])], messages: [{ seq: 5, id: 'A', class: 'prompt' }] },
    pending: { inbox: { nextTurn: ['B'], nextStep: [] }, queue: [{ id: 'B', placement: 'queued' }], consumedWork: { endSeq: 8, endTurn: 1, droppedUnrun: false } },
  },
  // Turn 1 starts at 2 and claims A at 3; its turn/end at 4 says "aborted" without the cause: refused, the turn stays
  // open (no end, no reason), no step ran, no accounting turn.
  'invalid-schema': {
    verdict: { events: 4, ok: false, errors: [{ seq: 4, code: 'invalid-event-data' }], turns: [turn(1, 2, null, null, 0, ['A'])], messages: [] },
    pending: { inbox: { nextTurn: [], nextStep: [] }, queue: [], consumedWork: { endSeq: null, endTurn: null, droppedUnrun: false } },
  },
  // 1 queues A; 2 cancels 3 items from a list of 1: refused; A stays queued.
  'invalid-splice-does-not-fit': {
    verdict: { events: 2, ok: false, errors: [{ seq: 2, code: 'invalid-splice' }], turns: [], messages: [] },
    pending: { inbox: { nextTurn: ['A'], nextStep: [] }, queue: [{ id: 'A', placement: 'queued' }], consumedWork: { endSeq: null, endTurn: null, droppedUnrun: false } },
  },
  // Turn 1 (2–19) claims prompt-1 (3); prompt-2 is queued (4). Step 1 calls read_log; steer-1 arrives in next-step
  // from the tool body (9) and ctx-1 (plugin) from its result (11). 13 claims both from next-step: step 2 enters
  // steer-1 (15, steering) and ctx-1 (16, context). Turn 2 (20–26) runs prompt-2 (23). Then ctx-parked (plugin) waits
  // in next-step (27) and prompt-3 in next-turn (28).
  'queue-steer-context': {
    verdict: {
      events: 29,
      ok: true,
      errors: [],
      turns: [turn(1, 2, 19, 'completed', 2, ['prompt-1', 'steer-1', 'ctx-1']), turn(2, 20, 26, 'completed', 1, ['prompt-2'])],
      messages: [
        { seq: 6, id: 'prompt-1', class: 'prompt' },
        { seq: 15, id: 'steer-1', class: 'steering' },
        { seq: 16, id: 'ctx-1', class: 'context' },
        { seq: 23, id: 'prompt-2', class: 'prompt' },
      ],
    },
    pending: {
      inbox: { nextTurn: ['prompt-3'], nextStep: ['ctx-parked'] },
      queue: [{ id: 'prompt-3', placement: 'queued' }, { id: 'ctx-parked', placement: 'context' }],
      consumedWork: { endSeq: 26, endTurn: 2, droppedUnrun: false },
    },
  },
};

describe('docs/examples, against expectations derived by hand', () => {
  it('covers every shipped example', () => {
    const shipped = readdirSync(new URL('../../../docs/examples', import.meta.url)).filter((f) => f.endsWith('.jsonl')).map((f) => f.replace(/\.jsonl$/, ''));
    expect(Object.keys(EXAMPLES).sort()).toEqual(shipped.sort());
  });

  describe.each(Object.entries(EXAMPLES))('%s', (name, byHand) => {
    it('verdict, turns and message classes', () => {
      const r = audit(name);
      expect({ events: r.events, ok: r.ok, errors: r.errors.map((e) => ({ seq: e.seq, code: e.code })), turns: r.turns, messages: r.messages }).toEqual(byHand.verdict);
    });
    it('pending lists, queue placement and consumed work', () => {
      const r = audit(name);
      expect({ inbox: r.inbox, queue: r.queue.map((q) => ({ id: q.id, placement: q.placement })), consumedWork: r.consumedWork }).toEqual(byHand.pending);
    });
  });
});
