import type { Envelope } from './session-log.js';
import { sessionLog } from './session-log.js';

/**
 * Valid session logs shaped to make a fold quadratic if it copies, re-reads or searches a growing collection per
 * event (issue 35): each one the Inbox accepts and `audit` calls valid, each produced one event at a time, ending
 * after at least `events` events and never inside a turn or a step. Deterministic.
 *
 * - `claims-outside-turns`: next-turn filled to `peak`, then the head claimed or a random item canceled, with no
 *   turn events at all (the claims pile up as "claimed, not yet in a step" forever);
 * - `long-turn`: `peak` pending in next-turn, then one turn whose every step claims one steer from next-step;
 * - `big-steps`: turns whose one step claims `peak` messages at once and enters each as a user/message;
 * - `cancels-and-edits`: cancels and edits (replace in place) at random positions of a `peak` list, admissions at
 *   its end;
 * - `middle-splices`: a `peak` list into whose middle items are spliced (one or two at a random position) and from
 *   whose middle two or three are removed at once: the splices no single-item path of a list covers;
 * - `strict-steers`: items taken from random positions of either list and moved to the end of the other by strict
 *   steers (canceled, then admitted into the other list under the same id in the next event);
 * - `fork`: a fork whose inherited seed is a long realistic session (`sessionLog`), then a churn of its own;
 * - `children`: `peak` children, each started, reporting to the parent (a report admitted, later claimed in a turn)
 *   and ended, then the same children activated again (epoch 2, 3, …);
 * - `busy-child`: the same with one child, activated again and again: one child's epochs and reports grow with the log.
 */
export type AdversarialShape =
  | 'claims-outside-turns'
  | 'long-turn'
  | 'big-steps'
  | 'cancels-and-edits'
  | 'middle-splices'
  | 'strict-steers'
  | 'fork'
  | 'children'
  | 'busy-child';

/** Every adversarial shape, in the order the guard and the benchmark run them. */
export const ADVERSARIAL_SHAPES: readonly AdversarialShape[] = [
  'claims-outside-turns',
  'long-turn',
  'big-steps',
  'cancels-and-edits',
  'middle-splices',
  'strict-steers',
  'fork',
  'children',
  'busy-child',
];

/** A deterministic UUID for event number `n` (the same as the realistic log's). */
const uuidAt = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

interface Message {
  readonly id: string;
  readonly role: 'user';
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
  readonly source: { readonly kind: string; readonly [k: string]: unknown };
}

/**
 * A log writer: seqs, ids and times in order, a seeded random, messages. As in the realistic log, the id of a
 * message that left the lists for good is `free`d and used again, so the number of distinct ids (and the audit's
 * per-input output) stays bounded while the log grows: memory then measures the folds, not the report.
 */
const writer = (firstSeq = 0) => {
  let seq = firstSeq;
  let seed = 35;
  let next = 0;
  const freeIds: string[] = [];
  return {
    get seq() {
      return seq;
    },
    at: (type: string, data: unknown): Envelope => ({ seq, id: uuidAt(seq + 1), time: 1_700_000_000_000 + seq++, type, data }),
    rand: (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    },
    message: (source: Message['source'] = { kind: 'user' }): Message => {
      const id = freeIds.pop() ?? `m-${next++}`;
      return { id, role: 'user', content: [{ type: 'text', text: `message ${id}` }], source };
    },
    free: (...messages: readonly Message[]): void => {
      for (const m of messages) freeIds.push(m.id);
    },
  };
};

const created = (sessionId: string, extra: object = {}) => ({ sessionId, createdAt: 1_700_000_000_000, kind: 'ordinary', ...extra });
const assistant = (turn: number, step: number) => ({ turn, step, message: { role: 'assistant', content: [{ type: 'text', text: 'done' }] } });

/** The events of one adversarial shape: at least `events`, `peak` the size of its long list (or its number of children). */
export function* adversarialLog(shape: AdversarialShape, events: number, peak: number, sessionId = 'bench-session'): Generator<Envelope> {
  switch (shape) {
    case 'claims-outside-turns':
      return yield* claimsOutsideTurns(events, peak, sessionId);
    case 'long-turn':
      return yield* longTurn(events, peak, sessionId);
    case 'big-steps':
      return yield* bigSteps(events, peak, sessionId);
    case 'cancels-and-edits':
      return yield* cancelsAndEdits(events, peak, sessionId);
    case 'middle-splices':
      return yield* middleSplices(events, peak, sessionId);
    case 'strict-steers':
      return yield* strictSteers(events, peak, sessionId);
    case 'fork':
      return yield* fork(events, peak, sessionId);
    case 'busy-child':
      return yield* children(events, 1, sessionId);
    case 'children':
      return yield* children(events, peak, sessionId);
  }
}

function* claimsOutsideTurns(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  const nt: Message[] = [];
  while (w.seq < events) {
    if (nt.length < peak) {
      const m = w.message();
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: nt.length, inserted: [m] });
      nt.push(m);
    } else if (w.rand(2) === 0) {
      w.free(nt.shift()!);
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] });
    } else {
      const i = w.rand(nt.length);
      w.free(...nt.splice(i, 1));
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: i, removedCount: 1, inserted: [], outcome: 'canceled' });
    }
  }
}

function* longTurn(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  for (let i = 0; i < peak; i++) yield w.at('agent/inbox/spliced', { target: 'next-turn', start: i, inserted: [w.message()] });
  yield w.at('turn/start', { turn: 1 });
  let step = 0;
  while (w.seq < events - 1) {
    step++;
    const m = w.message();
    yield w.at('agent/inbox/spliced', { target: 'next-step', start: 0, inserted: [m] });
    yield w.at('agent/inbox/spliced', { target: 'next-step', start: 0, removedCount: 1, inserted: [] });
    yield w.at('step/start', { turn: 1, step });
    yield w.at('user/message', m);
    yield w.at('assistant/message', assistant(1, step));
    yield w.at('step/end', { turn: 1, step });
    w.free(m);
  }
  yield w.at('turn/end', { turn: 1, reason: { kind: 'completed' } });
}

function* bigSteps(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  let turn = 0;
  while (w.seq < events) {
    const batch: Message[] = [];
    for (let i = 0; i < peak; i++) {
      const m = w.message(i % 2 === 0 ? { kind: 'user' } : { kind: 'plugin', plugin: 'bench' });
      batch.push(m);
      yield w.at('agent/inbox/spliced', { target: 'next-step', start: i, inserted: [m] });
    }
    turn++;
    yield w.at('turn/start', { turn });
    yield w.at('agent/inbox/spliced', { target: 'next-step', start: 0, removedCount: peak, inserted: [] });
    yield w.at('step/start', { turn, step: 1 });
    // every other message enters (in reverse order), the rest are dropped by the pre-step
    for (let i = batch.length - 1; i >= 0; i--) if (i % 4 !== 3) yield w.at('user/message', batch[i]);
    yield w.at('assistant/message', assistant(turn, 1));
    yield w.at('step/end', { turn, step: 1 });
    yield w.at('turn/end', { turn, reason: { kind: 'completed' } });
    w.free(...batch);
  }
}

function* cancelsAndEdits(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  const nt: Message[] = [];
  let edits = 0;
  while (w.seq < events) {
    if (nt.length < peak) {
      const m = w.message();
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: nt.length, inserted: [m] });
      nt.push(m);
    } else if (w.rand(2) === 0) {
      const i = w.rand(nt.length);
      w.free(...nt.splice(i, 1));
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: i, removedCount: 1, inserted: [], outcome: 'canceled' });
    } else {
      const i = w.rand(nt.length);
      const old = nt[i]!;
      const edited: Message = { ...old, content: [{ type: 'text', text: `edit ${edits++} of ${old.id}` }] };
      nt[i] = edited;
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: i, removedCount: 1, inserted: [edited], outcome: 'canceled' });
    }
  }
}

function* middleSplices(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  const nt: Message[] = [];
  while (w.seq < events) {
    if (nt.length < peak) {
      const inserted = nt.length % 2 === 0 ? [w.message(), w.message()] : [w.message()];
      const start = w.rand(nt.length + 1);
      nt.splice(start, 0, ...inserted);
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start, inserted });
    } else {
      const removedCount = 2 + w.rand(2);
      const start = w.rand(nt.length - removedCount + 1);
      w.free(...nt.splice(start, removedCount));
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start, removedCount, inserted: [], outcome: 'canceled' });
    }
  }
}

function* strictSteers(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  const lists = { 'next-turn': [] as Message[], 'next-step': [] as Message[] };
  for (let i = 0; i < peak; i++) {
    const m = w.message();
    lists['next-turn'].push(m);
    yield w.at('agent/inbox/spliced', { target: 'next-turn', start: i, inserted: [m] });
  }
  while (w.seq < events) {
    const toStep = lists['next-step'].length < peak / 4 || (lists['next-turn'].length > 0 && w.rand(2) === 0);
    const from = toStep ? 'next-turn' : 'next-step';
    const to = toStep ? 'next-step' : 'next-turn';
    const i = w.rand(lists[from].length);
    const [m] = lists[from].splice(i, 1);
    yield w.at('agent/inbox/spliced', { target: from, start: i, removedCount: 1, inserted: [], outcome: 'canceled' });
    // admitted at the end of the other list, as a steer or a follow-up is
    const j = lists[to].length;
    lists[to].push(m!);
    yield w.at('agent/inbox/spliced', { target: to, start: j, inserted: [m] });
  }
}

/** How many events `sessionLog(events, peak)` yields (it ends after the first whole step past `events`), and its turns. */
const sessionLogLength = (events: number, peak: number): { readonly length: number; readonly turns: number } => {
  let length = 0;
  let turns = 0;
  for (const e of sessionLog(events, peak, 'parent')) {
    length++;
    if (e.type === 'turn/start') turns++;
  }
  return { length, turns };
};

function* fork(events: number, peak: number, sessionId: string): Generator<Envelope> {
  // the seed is 90% of the log: a long realistic session of the parent, inherited whole
  const seedTarget = Math.max(1, Math.floor(events * 0.9));
  const { length: seedLength, turns } = sessionLogLength(seedTarget, peak);
  const w = writer();
  yield w.at('session/created', created(sessionId, { parentSession: 'parent', seedLength, origin: 'fork' }));
  for (const e of sessionLog(seedTarget, peak, 'parent')) yield w.at(e.type, e.data);
  yield w.at('session/end-seed', {});
  // then the fork's own churn: the realistic session's events after its session/created, under new message ids
  const own = sessionLog(events - w.seq + 1, Math.max(1, Math.floor(peak / 10)), sessionId);
  own.next();
  for (const e of own) yield w.at(e.type, renamed(e.data, turns));
}

/**
 * A realistic session's event data with every message id prefixed (the fork's own ids differ from its seed's) and
 * its turns numbered after the seed's `turns` (turn numbers go on from the inherited history).
 */
const renamed = (data: unknown, turns: number): unknown => {
  const d = data as { inserted?: readonly Message[]; id?: string; role?: string; turn?: number };
  if (Array.isArray(d.inserted)) return { ...d, inserted: d.inserted.map((m) => ({ ...m, id: `f-${m.id}` })) };
  if (d.role === 'user' && typeof d.id === 'string') return { ...d, id: `f-${d.id}` };
  if (typeof d.turn === 'number') return { ...d, turn: d.turn + turns };
  return data;
};

function* children(events: number, peak: number, sessionId: string): Generator<Envelope> {
  const w = writer();
  yield w.at('session/created', created(sessionId));
  let turn = 0;
  let pending: Message[] = [];
  for (let epoch = 1; w.seq < events; epoch++) {
    for (let c = 0; c < peak && w.seq < events; c++) {
      const childSessionId = `child-${c}`;
      const runId = `run-${c}-${epoch}`;
      yield w.at('subagent/start', { runId, childSessionId, mode: 'continuable', epoch });
      const report = w.message({ kind: c % 2 === 0 ? 'subagent-report' : 'subagent-settled', senderSessionId: childSessionId });
      yield w.at('agent/inbox/spliced', { target: 'next-turn', start: pending.length, inserted: [report] });
      pending.push(report);
      yield w.at('subagent/end', { runId, childSessionId, mode: 'continuable', epoch, stopReason: 'completed' });
      if (pending.length >= 8) {
        turn++;
        yield w.at('turn/start', { turn });
        yield w.at('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: pending.length, inserted: [] });
        yield w.at('step/start', { turn, step: 1 });
        for (const m of pending) yield w.at('user/message', m);
        yield w.at('assistant/message', assistant(turn, 1));
        yield w.at('step/end', { turn, step: 1 });
        yield w.at('turn/end', { turn, reason: { kind: 'completed' } });
        w.free(...pending);
        pending = [];
      }
    }
  }
}
