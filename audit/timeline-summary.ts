import type { QueueDepthPoint, SessionTimeline, TimelineInput, TimelineMarker, TimelineTurn } from './session-timeline.js';
import { latencyHistogram, type LatencyCounts } from './timeline-measures.js';

/** The part of a session's time a summary covers, and in how many columns. */
export interface TimelineWindow {
  /** ms since the epoch; the window is [from, to]. */
  readonly from: number;
  readonly to: number;
  /** Columns the window is cut into (the chart's pixel columns, or fewer). */
  readonly buckets: number;
}

/** One column of a {@link TimelineSummary}: what falls in [from, to). */
export interface TimelineBucket {
  readonly from: number;
  readonly to: number;
  /** Turns whose bar starts in the column (a turn that started before the window counts in the first). */
  readonly turns: number;
  /** Inputs claimed in the column, per class they entered with (`claimed`: claimed, no class yet). */
  readonly claims: { readonly prompt: number; readonly steering: number; readonly context: number; readonly claimed: number };
  /** Steer, cancel and stop markers in the column. */
  readonly markers: number;
  /** The deepest each pending list was in the column (its depth when the column opened included). */
  readonly nextTurn: number;
  readonly nextStep: number;
}

/** A stretch of time covered by turns, merged across gaps shorter than a column. */
export interface TurnSpan {
  readonly start: number;
  readonly end: number;
  /** Turns merged into it. */
  readonly turns: number;
}

/**
 * The timeline of a session summarised for one window: per column counts and queue depth, the turn bars merged per
 * column, the latency histogram of the whole session, and — when the window holds few enough turns to draw one by
 * one — the rows themselves. Small whatever the session's length: the console draws its first picture from it.
 */
export interface TimelineSummary {
  readonly sessionId: string;
  /** Time of the session's first and last event (the timeline's), null for an empty log. */
  readonly start: number | null;
  readonly end: number | null;
  readonly error: SessionTimeline['error'];
  readonly window: TimelineWindow;
  /** The whole session's counts: turns, admissions, claimed admissions, markers. */
  readonly totals: { readonly turns: number; readonly inputs: number; readonly claimed: number; readonly markers: number };
  /** Turns whose bar meets the window. */
  readonly turnsInWindow: number;
  /** True when the window holds more turns than `maxTurns`: `detail` is null and the columns stand for the rows. */
  readonly aggregated: boolean;
  readonly buckets: readonly TimelineBucket[];
  /** The turn bars of the window merged per column. */
  readonly spans: readonly TurnSpan[];
  /** The deepest each list ever was (the depth chart's scale). */
  readonly depthMax: { readonly nextTurn: number; readonly nextStep: number };
  /** Admitted → claimed latency of the whole session per class. */
  readonly latency: readonly LatencyCounts[];
  /**
   * When not aggregated: the timeline cut to the window (its turns, the inputs whose wait meets it, its markers, its
   * depth points and the one before it), the same rows the whole timeline holds.
   */
  readonly detail: SessionTimeline | null;
}

/** Options of {@link summarizeTimeline}. */
export interface SummaryOptions {
  /** Give the rows (not only columns) when the window holds at most this many turns. @defaultValue the window's bucket count */
  readonly maxTurns?: number;
}

/** The column of time `t` in `w` (clamped to the first and the last). */
export const bucketOf = (t: number, w: TimelineWindow): number => {
  const n = w.buckets;
  if (w.to <= w.from) return 0;
  return Math.min(n - 1, Math.max(0, Math.floor(((t - w.from) / (w.to - w.from)) * n)));
};

/** The time an input's wait line ends: its claim, `now` while it waits, else where it left (its admission). */
export const waitEnd = (i: TimelineInput, now: number): number => i.claimed ?? (i.outcome === 'waiting' ? now : i.admitted);

const meets = (a: number, b: number, w: TimelineWindow): boolean => b >= w.from && a <= w.to;

/** The turns whose bar meets `w` (a turn still open ends at `now`). */
export const turnsIn = (tl: SessionTimeline, w: TimelineWindow, now: number): TimelineTurn[] => tl.turns.filter((t) => meets(t.start, t.end ?? now, w));

const depthIn = (depth: readonly QueueDepthPoint[], w: TimelineWindow): QueueDepthPoint[] => {
  const out: QueueDepthPoint[] = [];
  let before: QueueDepthPoint | undefined;
  for (const p of depth) {
    if (p.time < w.from) before = p;
    else if (p.time <= w.to) out.push(p);
  }
  return before ? [before, ...out] : out;
};

/**
 * The summary of `tl` over `w`. Every figure is an aggregation of the timeline's own rows (one derivation: the
 * fold of `sessionTimeline`), so a summary of a window equals counting the whole timeline's rows in it.
 */
export const summarizeTimeline = (tl: SessionTimeline, w: TimelineWindow, options: SummaryOptions = {}): TimelineSummary => {
  const n = Math.max(1, Math.floor(w.buckets));
  const win: TimelineWindow = { from: w.from, to: w.to, buckets: n };
  const now = tl.end ?? w.to;
  const span = (w.to - w.from) / n;
  const buckets = Array.from({ length: n }, (_, k) => ({
    from: w.from + k * span,
    to: k === n - 1 ? w.to : w.from + (k + 1) * span,
    turns: 0,
    claims: { prompt: 0, steering: 0, context: 0, claimed: 0 },
    markers: 0,
    nextTurn: 0,
    nextStep: 0,
  }));
  const turns = turnsIn(tl, win, now);
  for (const t of turns) buckets[bucketOf(t.start, win)]!.turns++;
  // merged bars: a turn joins the span before it when it starts within a column of that span's end
  const spans: { start: number; end: number; turns: number }[] = [];
  for (const t of turns) {
    const start = Math.max(w.from, t.start);
    const end = Math.min(w.to, t.end ?? now);
    const last = spans.at(-1);
    if (last && start - last.end < span) {
      last.end = Math.max(last.end, end);
      last.turns++;
    } else spans.push({ start, end, turns: 1 });
  }
  for (const i of tl.inputs) {
    if (i.claimed === null || i.claimed < w.from || i.claimed > w.to) continue;
    buckets[bucketOf(i.claimed, win)]!.claims[i.class ?? 'claimed']++;
  }
  const markers: TimelineMarker[] = tl.markers.filter((m) => m.time >= w.from && m.time <= w.to);
  for (const m of markers) buckets[bucketOf(m.time, win)]!.markers++;
  // queue depth: each column's deepest, the depth it opened with included
  let nextTurn = 0;
  let nextStep = 0;
  const openColumn = (b: (typeof buckets)[number]) => {
    b.nextTurn = nextTurn;
    b.nextStep = nextStep;
  };
  let opened = -1;
  for (const p of tl.depth) {
    if (p.time > w.to) break;
    if (p.time >= w.from) {
      const at = bucketOf(p.time, win);
      while (opened < at) openColumn(buckets[++opened]!);
      nextTurn = p.nextTurn;
      nextStep = p.nextStep;
      const b = buckets[at]!;
      b.nextTurn = Math.max(b.nextTurn, nextTurn);
      b.nextStep = Math.max(b.nextStep, nextStep);
    } else {
      nextTurn = p.nextTurn;
      nextStep = p.nextStep;
    }
  }
  while (opened < n - 1) openColumn(buckets[++opened]!);
  const depthMax = tl.depth.reduce((m, p) => ({ nextTurn: Math.max(m.nextTurn, p.nextTurn), nextStep: Math.max(m.nextStep, p.nextStep) }), { nextTurn: 0, nextStep: 0 });
  const aggregated = turns.length > (options.maxTurns ?? n);
  const detail: SessionTimeline | null = aggregated
    ? null
    : { ...tl, turns, inputs: tl.inputs.filter((i) => meets(i.admitted, waitEnd(i, now), win)), markers, depth: depthIn(tl.depth, win) };
  return {
    sessionId: tl.sessionId,
    start: tl.start,
    end: tl.end,
    error: tl.error,
    window: win,
    totals: { turns: tl.turns.length, inputs: tl.inputs.length, claimed: tl.inputs.filter((i) => i.claimed !== null).length, markers: tl.markers.length },
    turnsInWindow: turns.length,
    aggregated,
    buckets,
    spans,
    depthMax,
    latency: latencyHistogram(tl.inputs),
    detail,
  };
};
