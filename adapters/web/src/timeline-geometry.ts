import type { SessionTimeline, TimelineInput } from '../../../audit/session-timeline.js';

/** The time window a chart shows and the width it draws it in. */
export interface TimeScale {
  /** ms since the epoch at x = 0 and at x = width. */
  readonly from: number;
  readonly to: number;
  readonly width: number;
}

/** x of time `t` on `s` (linear; a window of zero length draws everything at 0). */
export const xOf = (t: number, s: TimeScale): number => (s.to === s.from ? 0 : ((t - s.from) / (s.to - s.from)) * s.width);

/** The time at x on `s` (the inverse of {@link xOf}). */
export const timeAtX = (x: number, s: TimeScale): number => s.from + (s.to === s.from ? 0 : (x / s.width) * (s.to - s.from));

/** The lane an input's line is drawn in: its class once it entered, `unclaimed` for one that left or still waits. */
export type InputLane = 'prompt' | 'steering' | 'context' | 'claimed' | 'unclaimed';

/** What the timeline chart draws, in px of its scale. */
export interface TimelineGeometry {
  /** True when the window holds too many turns to draw one by one: {@link TimelineGeometry.buckets} replace the bars. */
  readonly aggregated: boolean;
  readonly turns: readonly { readonly turn: number; readonly x0: number; readonly x1: number; readonly open: boolean; readonly reason: string | null; readonly start: number; readonly end: number | null }[];
  readonly steps: readonly { readonly turn: number; readonly step: number; readonly x0: number; readonly x1: number }[];
  readonly calls: readonly { readonly turn: number; readonly step: number; readonly kind: 'model' | 'tool'; readonly name: string; readonly x0: number; readonly x1: number; readonly open: boolean }[];
  /** One line per claimed input (admission → claim) in the window; waiting or unclaimed ones end at their last known time. */
  readonly lines: readonly { readonly id: string; readonly lane: InputLane; readonly x0: number; readonly x1: number; readonly claimed: boolean; readonly row: number }[];
  readonly markers: readonly { readonly kind: 'steer' | 'cancel' | 'stop'; readonly x: number; readonly seq: number }[];
  /** When aggregated: turns and claimed inputs per column of `bucketPx`. */
  readonly buckets: readonly { readonly x0: number; readonly x1: number; readonly turns: number; readonly lines: number }[];
}

/** Options of {@link timelineGeometry}. */
export interface GeometryOptions {
  /** Aggregate when the window holds more turns than this. @defaultValue width / 4 (a bar narrower than ~4 px on average) */
  readonly maxTurns?: number;
  /** Width of one aggregate column, px. @defaultValue 4 */
  readonly bucketPx?: number;
  /** The time open bars and waiting lines end at (the log's last event, or now for a live log). @defaultValue the timeline's end */
  readonly now?: number;
}

const laneOf = (i: TimelineInput): InputLane => (i.outcome !== 'claimed' ? 'unclaimed' : i.class ?? 'claimed');

/**
 * The chart's geometry for the part of `tl` inside `s`: a bar per turn and step from its start event's time to its
 * end event's time, the model and tool calls inside, one line per input from its admission to its claim (an input
 * that never was claimed ends where it left, or at `now` while it waits), and the steer, cancel and stop markers.
 * Pure: the browser draws exactly this, and the tests check it against the log.
 */
export const timelineGeometry = (tl: SessionTimeline, s: TimeScale, options: GeometryOptions = {}): TimelineGeometry => {
  const now = options.now ?? tl.end ?? s.to;
  const inWindow = (a: number, b: number) => b >= s.from && a <= s.to;
  const visibleTurns = tl.turns.filter((t) => inWindow(t.start, t.end ?? now));
  const maxTurns = options.maxTurns ?? Math.max(1, Math.floor(s.width / 4));
  const aggregated = visibleTurns.length > maxTurns;
  const lineEnd = (i: TimelineInput): number => i.claimed ?? (i.outcome === 'waiting' ? now : i.admitted);
  const visibleInputs = tl.inputs.filter((i) => inWindow(i.admitted, lineEnd(i)));
  const markers = tl.markers.filter((m) => inWindow(m.time, m.time)).map((m) => ({ kind: m.kind, x: xOf(m.time, s), seq: m.seq }));
  if (aggregated) {
    const px = options.bucketPx ?? 4;
    const n = Math.max(1, Math.ceil(s.width / px));
    const buckets = Array.from({ length: n }, (_, k) => ({ x0: k * px, x1: Math.min(s.width, (k + 1) * px), turns: 0, lines: 0 }));
    const at = (t: number) => Math.min(n - 1, Math.max(0, Math.floor(xOf(t, s) / px)));
    for (const t of visibleTurns) buckets[at(t.start)]!.turns++;
    for (const i of visibleInputs) if (i.claimed !== null) buckets[at(i.claimed)]!.lines++;
    return { aggregated, turns: [], steps: [], calls: [], lines: [], markers, buckets };
  }
  const turns = visibleTurns.map((t) => ({ turn: t.turn, x0: xOf(t.start, s), x1: xOf(t.end ?? now, s), open: t.end === null, reason: t.reason, start: t.start, end: t.end }));
  const steps = visibleTurns.flatMap((t) => t.steps.map((st) => ({ turn: t.turn, step: st.step, x0: xOf(st.start, s), x1: xOf(st.end ?? now, s) })));
  const calls = visibleTurns.flatMap((t) =>
    t.steps.flatMap((st) =>
      st.calls.map((c) => ({ turn: t.turn, step: st.step, kind: c.kind, name: c.kind === 'tool' ? c.name : 'model', x0: xOf(c.start, s), x1: xOf(c.end ?? now, s), open: c.end === null })),
    ),
  );
  const lines = visibleInputs.map((i, k) => ({ id: i.id, lane: laneOf(i), x0: xOf(i.admitted, s), x1: xOf(lineEnd(i), s), claimed: i.claimed !== null, row: k % 4 }));
  return { aggregated, turns, steps, calls, lines, markers, buckets: [] };
};

export { LATENCY_BINS, latencyHistogram, seqAtTime } from '../../../audit/timeline-measures.js';
