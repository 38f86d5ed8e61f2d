import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TimelineBucket, TimelineSummary } from '../../../audit/timeline-summary.js';
import type { LatencyCounts } from '../../../audit/timeline-measures.js';
import { LATENCY_BINS, timeAtX, timelineGeometry, xOf, type TimeScale } from './timeline-geometry.js';

/** The chart's drawing width (its viewBox; the SVG scales to its box). */
const W = 1000;
const LANES = ['prompt', 'steering', 'context', 'unclaimed'] as const;
const LANE_Y0 = 96;
const LANE_H = 18;
const H = LANE_Y0 + LANES.length * LANE_H + 8;

/** A time on the axis: the clock time with ms, in UTC (the log's times are UTC). */
export const axisLabel = (t: number, span: number): string => {
  const iso = new Date(t).toISOString();
  return span < 10_000 ? iso.slice(14, 23) : span < 86_400_000 ? iso.slice(11, 19) : iso.slice(5, 16).replace('T', ' ');
};

const ticks = (s: TimeScale, n = 6): number[] => {
  const span = s.to - s.from;
  if (span <= 0) return [s.from];
  const raw = span / n;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((x) => x >= raw) ?? raw;
  const out: number[] = [];
  for (let t = Math.ceil(s.from / step) * step; t <= s.to; t += step) out.push(t);
  return out;
};

const duration = (ms: number): string => (ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`);

/** Props of {@link TimelineChart}. */
export interface TimelineChartProps {
  /** The whole session's summary (its window is the whole session): the first picture, and the chart's bounds. */
  readonly summary: TimelineSummary;
  /** The summary of another window (zoomed or panned), from the same server-side derivation. */
  readonly summaryOf: (window: { readonly from: number; readonly to: number }) => Promise<TimelineSummary>;
  /** The scrubber's seq and its time: drawn as the cursor. */
  readonly at: number;
  readonly atTime: number | null;
  /** Moves the scrubber to the seq at a time of the axis. */
  readonly onSeek: (time: number) => void;
}

/** Columns a summary is asked in: one per 4 px of the drawing. */
export const CHART_BUCKETS = W / 4;

/**
 * The session along real time: turns and steps as bars, model and tool calls inside them, each input as a line
 * from its admission to its claim (by class), steer / cancel / stop markers, and the scrubber's cursor. Clicking
 * the chart moves the scrubber to the seq at that time. A window with more turns than it can draw one by one shows
 * how many turns and claims fall in each column instead (the server's summary); zoom in to see them.
 */
export const TimelineChart = ({ summary: whole, summaryOf, at, atTime, onSeek }: TimelineChartProps) => {
  const full = whole.window;
  const [win, setWin] = useState<{ from: number; to: number }>(full);
  const [shown, setShown] = useState<TimelineSummary>(whole);
  // the whole session's summary is held; any other window is asked for (the last one asked wins)
  const asked = useRef(0);
  useEffect(() => {
    const ticket = ++asked.current;
    if (win.from === full.from && win.to === full.to) {
      setShown(whole);
      return;
    }
    summaryOf(win).then(
      (x) => ticket === asked.current && setShown(x),
      () => {},
    );
  }, [whole, win.from, win.to]);
  const sum = shown;
  const s: TimeScale = { from: sum.window.from, to: sum.window.to, width: W };
  const g = useMemo(() => (sum.detail ? timelineGeometry(sum.detail, s) : null), [sum]);
  const span = win.to - win.from;
  const zoom = (factor: number) => {
    const center = atTime !== null && atTime >= win.from && atTime <= win.to ? atTime : (win.from + win.to) / 2;
    const half = Math.max(5, (span * factor) / 2);
    const from = Math.max(full.from, center - half);
    setWin({ from, to: Math.min(full.to, Math.max(from + 10, center + half)) });
  };
  const pan = (dir: number) => {
    const d = span * 0.5 * dir;
    const from = Math.min(Math.max(full.from, win.from + d), Math.max(full.from, full.to - span));
    setWin({ from, to: from + span });
  };
  const seek = (e: MouseEvent) => {
    const box = (e.currentTarget as SVGSVGElement).getBoundingClientRect();
    onSeek(timeAtX(((e.clientX - box.left) / box.width) * W, s));
  };
  const cursor = atTime !== null ? xOf(atTime, s) : null;
  const claims = (b: TimelineBucket) => b.claims.prompt + b.claims.steering + b.claims.context + b.claims.claimed;
  const maxBucket = sum.aggregated ? sum.buckets.reduce((m, b) => Math.max(m, b.turns, claims(b)), 1) : 1;
  const px = W / sum.buckets.length;
  const shownSpan = s.to - s.from;
  return (
    <section class="card timeline" aria-label="Timeline">
      <div class="card-head">
        <h2>Timeline</h2>
        <div class="toolbar" role="group" aria-label="Timeline zoom">
          <button type="button" onClick={() => pan(-1)} aria-label="Earlier">
            ◀
          </button>
          <button type="button" onClick={() => zoom(0.25)}>
            Zoom in
          </button>
          <button type="button" onClick={() => zoom(4)}>
            Zoom out
          </button>
          <button type="button" onClick={() => setWin(full)}>
            Whole session
          </button>
          <button type="button" onClick={() => pan(1)} aria-label="Later">
            ▶
          </button>
        </div>
      </div>
      <p class="hint">
        {axisLabel(s.from, shownSpan)} – {axisLabel(s.to, shownSpan)} UTC ({duration(Math.round(shownSpan))}) · {!g ? `${sum.turnsInWindow} turns: counted per column; zoom in to see each turn` : `${g.turns.length} turn${g.turns.length === 1 ? '' : 's'}, ${g.lines.filter((l) => l.claimed).length} claimed input${g.lines.length === 1 ? '' : 's'} in view`} · click the chart to move the scrubber there
      </p>
      <svg
        class="chart"
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Timeline: ${sum.totals.turns} turns and ${sum.totals.inputs} admissions along time; the cursor is at seq ${at}`}
        onClick={seek}
        data-aggregated={String(sum.aggregated)}
        data-from={s.from}
        data-to={s.to}
      >
        {ticks(s).map((t) => (
          <g key={t} class="tick">
            <line x1={xOf(t, s)} x2={xOf(t, s)} y1={14} y2={H} />
            <text x={xOf(t, s) + 2} y={11}>
              {axisLabel(t, shownSpan)}
            </text>
          </g>
        ))}
        <text class="lane-label" x={2} y={30}>
          turns
        </text>
        {g?.turns.map((t) => (
          <rect key={`t${t.turn}`} class={`bar turn reason-${t.reason ?? 'open'}`} x={t.x0} width={Math.max(1, t.x1 - t.x0)} y={34} height={18} data-turn-bar={t.turn} data-x0={t.x0} data-x1={t.x1} data-start={t.start} data-end={t.end ?? ''}>
            <title>
              turn {t.turn}: {t.reason ?? 'open'}, {t.end !== null ? duration(t.end - t.start) : 'running'}
            </title>
          </rect>
        ))}
        {g?.steps.map((st) => (
          <rect key={`s${st.turn}.${st.step}`} class="bar step" x={st.x0} width={Math.max(1, st.x1 - st.x0)} y={54} height={12} data-step-bar={`${st.turn}.${st.step}`}>
            <title>
              turn {st.turn} step {st.step}
            </title>
          </rect>
        ))}
        {g?.calls.map((c, i) => (
          <rect key={`c${i}`} class={`bar call call-${c.kind}`} x={c.x0} width={Math.max(1, c.x1 - c.x0)} y={c.kind === 'model' ? 68 : 78} height={8} data-call={c.kind}>
            <title>
              {c.kind === 'model' ? 'model request' : `tool ${c.name}`}
              {c.open ? ' (running)' : ''}
            </title>
          </rect>
        ))}
        {sum.aggregated
          ? sum.spans.map((sp, i) => (
                <rect key={`sp${i}`} class="bar span" x={xOf(sp.start, s)} width={Math.max(1, xOf(sp.end, s) - xOf(sp.start, s))} y={54} height={6} data-span={sp.turns}>
                  <title>{sp.turns} turns</title>
                </rect>
              ))
          : null}
        {sum.aggregated
          ? sum.buckets.map((b, i) =>
              b.turns + claims(b) + b.markers === 0 ? null : (
                <g key={`b${i}`} data-bucket={i} data-turns={b.turns} data-claims={claims(b)}>
                  <rect class="bar turn" x={i * px} width={px} y={52 - (18 * b.turns) / maxBucket} height={(18 * b.turns) / maxBucket} />
                  <rect class="bar density" x={i * px} width={px} y={H - 8 - (LANES.length * LANE_H * claims(b)) / maxBucket} height={(LANES.length * LANE_H * claims(b)) / maxBucket} />
                  {b.markers > 0 ? <line class="marker" x1={(i + 0.5) * px} x2={(i + 0.5) * px} y1={30} y2={H - 4} data-markers={b.markers} /> : null}
                </g>
              ),
            )
          : null}
        {LANES.map((lane, k) => (
          <text key={lane} class="lane-label" x={2} y={LANE_Y0 + k * LANE_H + 10}>
            {lane}
          </text>
        ))}
        {g?.lines.map((l, i) => {
          const y = LANE_Y0 + LANES.indexOf(l.lane === 'claimed' ? 'prompt' : l.lane) * LANE_H + 4 + l.row * 3;
          return (
            <g key={`l${i}`} class={`wait cls-${l.lane}`} data-input-line={l.id} data-claimed={String(l.claimed)} data-x0={l.x0} data-x1={l.x1}>
              <line x1={l.x0} x2={Math.max(l.x0 + 1, l.x1)} y1={y} y2={y} />
              <circle cx={l.x0} cy={y} r={2} />
              {l.claimed ? <circle cx={l.x1} cy={y} r={2.5} class="claim" /> : null}
            </g>
          );
        })}
        {g?.markers.map((m, i) => (
          <g key={`m${i}`} class={`marker marker-${m.kind}`} data-marker={m.kind} data-seq={m.seq}>
            <line x1={m.x} x2={m.x} y1={30} y2={H - 4} />
            <text x={m.x + 2} y={92}>
              {m.kind === 'steer' ? '⇥ steer' : m.kind === 'cancel' ? '✕ cancel' : '■ stop'}
            </text>
          </g>
        ))}
        {cursor !== null && cursor >= 0 && cursor <= W ? <line class="cursor" x1={cursor} x2={cursor} y1={14} y2={H} data-cursor-seq={at} /> : null}
      </svg>
      <ul class="legend" aria-label="Legend">
        <li><span class="swatch turn" /> turn</li>
        <li><span class="swatch step" /> step</li>
        <li><span class="swatch call-model" /> model request</li>
        <li><span class="swatch call-tool" /> tool call</li>
        <li><span class="swatch cls-prompt" /> prompt wait (solid)</li>
        <li><span class="swatch cls-steering" /> steering wait (dashed)</li>
        <li><span class="swatch cls-context" /> context wait (dotted)</li>
        <li><span class="swatch cls-unclaimed" /> never claimed / waiting</li>
      </ul>
      <QueueDepthChart summary={sum} scale={s} cursor={cursor} />
      <LatencyHistogram latency={whole.latency} />
    </section>
  );
};

const DEPTH_H = 90;

/**
 * Both pending lists' depth over the chart's window (a step line per list), on the timeline's axis: every change
 * when the window's rows are at hand, else each column's deepest.
 */
const QueueDepthChart = ({ summary: sum, scale: s, cursor }: { summary: TimelineSummary; scale: TimeScale; cursor: number | null }) => {
  const max = Math.max(1, sum.depthMax.nextTurn, sum.depthMax.nextStep);
  const points = useMemo(
    () => sum.detail?.depth ?? sum.buckets.map((b) => ({ time: b.from, nextTurn: b.nextTurn, nextStep: b.nextStep })),
    [sum],
  );
  const path = (key: 'nextTurn' | 'nextStep'): string => {
    const y = (v: number) => DEPTH_H - 6 - (v / max) * (DEPTH_H - 14);
    let d = `M0,${y(0)}`;
    let lastX = -1;
    let lastV = 0;
    for (const p of points) {
      const x = Math.max(0, Math.min(W, xOf(p.time, s)));
      const v = p[key];
      if (Math.round(x) === Math.round(lastX) && v <= lastV) continue; // one column: its highest value
      d += `H${x.toFixed(1)}V${y(v).toFixed(1)}`;
      lastX = x;
      lastV = v;
    }
    return `${d}H${W}`;
  };
  // redrawn when the window's summary changes, not when the cursor moves
  const paths = useMemo(() => ({ nextTurn: path('nextTurn'), nextStep: path('nextStep') }), [points]);
  return (
    <figure class="subchart">
      <figcaption>Queue depth over time (max {max}): next-turn solid, next-step dashed</figcaption>
      <svg viewBox={`0 0 ${W} ${DEPTH_H}`} role="img" aria-label={`Queue depth over time; at most ${max} waiting`} data-depth-points={points.length}>
        <path class="depth next-turn" d={paths.nextTurn} />
        <path class="depth next-step" d={paths.nextStep} />
        {cursor !== null && cursor >= 0 && cursor <= W ? <line class="cursor" x1={cursor} x2={cursor} y1={0} y2={DEPTH_H} /> : null}
      </svg>
    </figure>
  );
};

/** Admitted → claimed latency per class: a bar per bin and class, with the counts written. */
const LatencyHistogram = ({ latency: h }: { latency: readonly LatencyCounts[] }) => {
  const max = h.reduce((m, x) => x.counts.reduce((a, c) => Math.max(a, c), m), 1);
  const groupW = W / LATENCY_BINS.length;
  const barW = (groupW - 20) / Math.max(1, h.length);
  const HH = 120;
  return (
    <figure class="subchart">
      <figcaption>Admitted → claimed latency per class ({h.reduce((n, x) => n + x.counts.reduce((a, b) => a + b, 0), 0)} claimed inputs)</figcaption>
      <svg viewBox={`0 0 ${W} ${HH}`} role="img" aria-label={`Latency histogram: ${h.map((x) => `${x.cls} ${x.counts.join('/')}`).join('; ') || 'no claimed input'}`}>
        {LATENCY_BINS.map((b, i) => (
          <g key={b.label}>
            {h.map((x, k) => {
              const c = x.counts[i]!;
              const bh = (c / max) * (HH - 40);
              return (
                <g key={x.cls} class={`cls-${x.cls}`} data-latency={`${x.cls}:${i}`} data-count={c}>
                  <rect class="hist" x={i * groupW + 10 + k * barW} width={barW - 2} y={HH - 22 - bh} height={bh} />
                  {c > 0 ? (
                    <text x={i * groupW + 10 + k * barW + 1} y={HH - 25 - bh}>
                      {c}
                    </text>
                  ) : null}
                </g>
              );
            })}
            <text class="bin-label" x={i * groupW + 10} y={HH - 6}>
              {b.label}
            </text>
          </g>
        ))}
      </svg>
      <ul class="legend" aria-label="Latency classes">
        {h.map((x) => (
          <li key={x.cls}>
            <span class={`swatch cls-${x.cls}`} /> {x.cls}: {x.counts.reduce((a, b) => a + b, 0)}
          </li>
        ))}
      </ul>
    </figure>
  );
};
