import type { LogEvent } from '../domain/events.js';
import type { MessageClass } from '../domain/history-classification.js';
import { createFateFold, type FateEntry, type MessageFate } from '../domain/message-fate.js';

/**
 * What the console's timeline draws of one session, derived from its log alone: turns and steps with the times of
 * the events that open and close them, the model request and tool calls inside each step, every admission of an
 * input with the time it was claimed (or why it never was), the steers and cancels, and the depth of both pending
 * lists after every event that changes them. Times are the events' own `time` fields (ms since the epoch).
 */
export interface SessionTimeline {
  readonly sessionId: string;
  /** Time of the first and the last event; null for an empty log. */
  readonly start: number | null;
  readonly end: number | null;
  readonly turns: readonly TimelineTurn[];
  readonly inputs: readonly TimelineInput[];
  readonly markers: readonly TimelineMarker[];
  /** Depth of next-turn and next-step after each event that changed one of them, in log order (starts at 0, 0). */
  readonly depth: readonly QueueDepthPoint[];
  /** Set when the session fold refused an event: the timeline stops before it. */
  readonly error: { readonly seq: number; readonly message: string } | null;
}

/** One turn: `turn/start` to `turn/end` (end null while open). */
export interface TimelineTurn {
  readonly turn: number;
  readonly startSeq: number;
  readonly start: number;
  readonly endSeq: number | null;
  readonly end: number | null;
  /** The `turn/end` reason's kind (`completed`, `aborted`, …), null while open. */
  readonly reason: string | null;
  readonly steps: readonly TimelineStep[];
}

/** One step: `step/start` to `step/end`, with its model request and tool calls. */
export interface TimelineStep {
  readonly step: number;
  readonly startSeq: number;
  readonly start: number;
  readonly endSeq: number | null;
  readonly end: number | null;
  readonly calls: readonly TimelineCall[];
}

/**
 * A call inside a step: the model request (from the step's start, or the end of its last tool call, to its
 * `assistant/message`), or a tool call (`tool/call` to its `tool/result`; end null while it runs).
 */
export type TimelineCall =
  | { readonly kind: 'model'; readonly start: number; readonly end: number; readonly seq: number }
  | { readonly kind: 'tool'; readonly name: string; readonly callId: string; readonly start: number; readonly startSeq: number; readonly end: number | null; readonly endSeq: number | null; readonly error: boolean };

/** One admission of an input, and what ended its wait. */
export interface TimelineInput {
  readonly id: string;
  /** The message's text preview (`[encrypted]` / `[erased]` for sealed content the reader could not open). */
  readonly text: string;
  readonly source: string;
  /** Who admitted it, null when the log names nobody. */
  readonly actor: string | null;
  readonly target: 'next-turn' | 'next-step';
  readonly admittedSeq: number;
  readonly admitted: number;
  /** The claim (for next-step input, its entry into a step), null while it waits or when it left unclaimed. */
  readonly claimedSeq: number | null;
  readonly claimed: number | null;
  /** The class the history gives it when it entered (null until it entered). */
  readonly class: MessageClass | null;
  /** The turn that claimed it, null when none did. */
  readonly turn: number | null;
  /** How its wait ended: claimed, canceled, dropped, not-run, or still waiting. */
  readonly outcome: 'claimed' | 'canceled' | 'dropped' | 'not-run' | 'waiting';
}

/** A steer (a row moved into the current turn) or a cancel (a row removed, or a turn stopped). */
export interface TimelineMarker {
  readonly kind: 'steer' | 'cancel' | 'stop';
  readonly seq: number;
  readonly time: number;
  readonly id: string | null;
  readonly actor: string | null;
}

/** The depth of both pending lists after the event at `seq`. */
export interface QueueDepthPoint {
  readonly seq: number;
  readonly time: number;
  readonly nextTurn: number;
  readonly nextStep: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

/** A `turn/end` reason's kind. */
const reasonOf = (data: unknown): string => {
  const r = (data as { reason?: unknown }).reason;
  return typeof r === 'object' && r !== null && typeof (r as { kind?: unknown }).kind === 'string' ? (r as { kind: string }).kind : String(r ?? 'unknown');
};

/**
 * The timeline of a session's log (events in seq order). Inputs come from the same fold as "what happened to this
 * input?" (`createFateFold`): one {@link TimelineInput} per admission, claimed at its first `claimed` or `entered`
 * entry after it. The fold stops at the first event it refuses, and so does the timeline.
 */
export const sessionTimeline = (sessionId: string, events: readonly LogEvent[]): SessionTimeline => {
  const turns: Mutable<TimelineTurn>[] = [];
  const openTurns = new Map<number, Mutable<TimelineTurn>>();
  const openSteps = new Map<string, Mutable<TimelineStep> & { lastEnd: number }>();
  const openTools = new Map<string, Mutable<Extract<TimelineCall, { kind: 'tool' }>>>();
  const markers: TimelineMarker[] = [];
  const depth: QueueDepthPoint[] = [];
  const fold = createFateFold();
  /** Per id, its current admission (index into inputs) while it waits. */
  const waiting = new Map<string, number>();
  const inputs: Mutable<TimelineInput>[] = [];
  let nextTurn = 0;
  let nextStep = 0;
  let error: SessionTimeline['error'] = null;
  let pendingChange = false;

  for (const e of events) {
    if (!fold.push(e)) {
      error = { seq: e.seq, message: fold.error?.message ?? 'refused' };
      break;
    }
    const d = e.data as Record<string, unknown>;
    switch (e.type) {
      case 'turn/start': {
        const t: Mutable<TimelineTurn> = { turn: d.turn as number, startSeq: e.seq, start: e.time, endSeq: null, end: null, reason: null, steps: [] };
        turns.push(t);
        openTurns.set(t.turn, t);
        break;
      }
      case 'turn/end': {
        const t = openTurns.get(d.turn as number);
        if (t) {
          t.endSeq = e.seq;
          t.end = e.time;
          t.reason = reasonOf(d);
          openTurns.delete(t.turn);
        }
        break;
      }
      case 'step/start': {
        const t = openTurns.get(d.turn as number);
        const s = { step: d.step as number, startSeq: e.seq, start: e.time, endSeq: null, end: null, calls: [], lastEnd: e.time };
        t?.steps.push(s);
        openSteps.set(`${d.turn}/${d.step}`, s);
        break;
      }
      case 'step/end': {
        const s = openSteps.get(`${d.turn}/${d.step}`);
        if (s) {
          s.endSeq = e.seq;
          s.end = e.time;
          openSteps.delete(`${d.turn}/${d.step}`);
        }
        break;
      }
      case 'assistant/message': {
        const s = openSteps.get(`${d.turn}/${d.step}`);
        if (s) {
          s.calls.push({ kind: 'model', start: s.lastEnd, end: e.time, seq: e.seq });
          s.lastEnd = e.time;
        }
        break;
      }
      case 'tool/call': {
        const s = openSteps.get(`${d.turn}/${d.step}`);
        const c = { kind: 'tool' as const, name: d.name as string, callId: d.callId as string, start: e.time, startSeq: e.seq, end: null, endSeq: null, error: false };
        s?.calls.push(c);
        openTools.set(c.callId, c);
        break;
      }
      case 'tool/result': {
        const callId = (d.message as { callId?: string } | undefined)?.callId;
        const c = callId === undefined ? undefined : openTools.get(callId);
        if (c) {
          c.end = e.time;
          c.endSeq = e.seq;
          c.error = d.error !== undefined || (d.message as { isError?: boolean }).isError === true;
          openTools.delete(c.callId);
          const s = openSteps.get(`${d.turn}/${d.step}`);
          if (s) s.lastEnd = Math.max(s.lastEnd, e.time);
        }
        break;
      }
    }
  }
  // the inputs' waits from the fold's entries, all applied in log order (entries of one event in the fold's order)
  const all: { entry: FateEntry; fate: MessageFate; order: number }[] = [];
  let order = 0;
  for (const f of fold.fates.values()) for (const entry of f.entries) all.push({ entry, fate: f, order: order++ });
  all.sort((a, b) => a.entry.seq - b.entry.seq || a.order - b.order);
  for (let i = 0; i < all.length; i++) {
    const { entry, fate } = all[i]!;
    const changed = applyEntry(entry, fate, waiting, inputs, (dt, ds) => {
      nextTurn += dt;
      nextStep += ds;
    });
    const lastOfEvent = all[i + 1]?.entry.seq !== entry.seq;
    if (changed) pendingChange = true;
    if (lastOfEvent && pendingChange) {
      depth.push({ seq: entry.seq, time: entry.time, nextTurn, nextStep });
      pendingChange = false;
    }
  }
  for (const a of fold.actions) {
    if (a.kind === 'moved') markers.push({ kind: 'steer', seq: a.seq, time: a.time, id: a.id, actor: a.actor });
    if (a.kind === 'canceled') markers.push({ kind: 'cancel', seq: a.seq, time: a.time, id: a.id, actor: a.actor });
    if (a.kind === 'stopped') markers.push({ kind: 'stop', seq: a.seq, time: a.time, id: null, actor: a.actor });
  }
  markers.sort((a, b) => a.seq - b.seq);
  const first = events[0];
  const last = error ? events[error.seq - 1] : events.at(-1);
  return { sessionId, start: first?.time ?? null, end: last?.time ?? null, turns: turns.map((t) => ({ ...t, steps: t.steps.map((s) => { const { lastEnd: _l, ...step } = s as TimelineStep & { lastEnd?: number }; return step; }) })), inputs, markers, depth, error };
};

/** Applies one fate entry to the waits; returns whether a pending list's depth changed. */
const applyEntry = (
  entry: FateEntry,
  f: MessageFate,
  waiting: Map<string, number>,
  inputs: Mutable<TimelineInput>[],
  move: (nextTurn: number, nextStep: number) => void,
): boolean => {
  const at = waiting.get(f.id);
  const current = at === undefined ? undefined : inputs[at]!;
  const leave = (outcome: TimelineInput['outcome']) => {
    if (!current) return false;
    current.outcome = outcome;
    waiting.delete(f.id);
    if (current.target === 'next-turn') move(-1, 0);
    else move(0, -1);
    return true;
  };
  switch (entry.kind) {
    case 'admitted': {
      if (current) leave('canceled');
      const admission = admittedBy(entry);
      inputs.push({ id: f.id, text: f.preview, source: f.source, actor: admission, target: entry.target, admittedSeq: entry.seq, admitted: entry.time, claimedSeq: null, claimed: null, class: null, turn: null, outcome: 'waiting' });
      waiting.set(f.id, inputs.length - 1);
      if (entry.target === 'next-turn') move(1, 0);
      else move(0, 1);
      return true;
    }
    case 'edited':
      if (current) current.text = f.preview;
      return false;
    case 'moved': {
      if (!current || current.target === entry.to) return false;
      if (current.target === 'next-turn') move(-1, 1);
      else move(1, -1);
      current.target = entry.to;
      return true;
    }
    case 'canceled':
      return leave('canceled');
    case 'dropped':
      return leave('dropped');
    case 'not-run':
      if (current) return leave('not-run');
      return false;
    case 'claimed':
    case 'entered': {
      if (current) {
        current.claimed = entry.time;
        current.claimedSeq = entry.seq;
        current.turn = entry.turn;
        if (entry.kind === 'entered') current.class = entry.class;
        return leave('claimed');
      }
      // entered after its claim: the class of the input claimed last with this id
      if (entry.kind === 'entered') {
        for (let i = inputs.length - 1; i >= 0; i--) {
          const x = inputs[i]!;
          if (x.id === f.id) {
            if (x.class === null && x.outcome === 'claimed') x.class = entry.class;
            break;
          }
        }
      }
      return false;
    }
  }
};

const admittedBy = (entry: Extract<FateEntry, { kind: 'admitted' }>): string | null => entry.actor;
