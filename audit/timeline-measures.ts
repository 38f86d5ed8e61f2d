import type { SessionTimeline, TimelineInput } from './session-timeline.js';

/** Upper bounds (ms, exclusive) of the latency histogram's bins; the last bin takes the rest. */
export const LATENCY_BINS: readonly { readonly label: string; readonly below: number }[] = [
  { label: '< 10 ms', below: 10 },
  { label: '< 100 ms', below: 100 },
  { label: '< 1 s', below: 1_000 },
  { label: '< 10 s', below: 10_000 },
  { label: '< 1 min', below: 60_000 },
  { label: '≥ 1 min', below: Number.POSITIVE_INFINITY },
];

/** Claimed inputs of one class counted per bin of {@link LATENCY_BINS}. */
export interface LatencyCounts {
  /** The class the input entered with (`claimed` for one claimed before it entered). */
  readonly cls: string;
  readonly counts: readonly number[];
}

/** Admitted → claimed latency of the claimed inputs, counted per class and bin ({@link LATENCY_BINS}). */
export const latencyHistogram = (inputs: readonly TimelineInput[]): LatencyCounts[] => {
  const by = new Map<string, number[]>();
  for (const i of inputs) {
    if (i.claimed === null) continue;
    const cls = i.class ?? 'claimed';
    const counts = by.get(cls) ?? by.set(cls, LATENCY_BINS.map(() => 0)).get(cls)!;
    const ms = i.claimed - i.admitted;
    counts[LATENCY_BINS.findIndex((b) => ms < b.below)]!++;
  }
  return [...by].map(([cls, counts]) => ({ cls, counts }));
};

/**
 * The seq whose state the chart's time `t` shows: the last seq the timeline knows a time for (a turn or step
 * boundary, a call, an admission, a claim, a marker, a queue change) at or before `t`; -1 before the first.
 */
export const seqAtTime = (tl: SessionTimeline, t: number): number => {
  let best = -1;
  let bestTime = Number.NEGATIVE_INFINITY;
  const consider = (seq: number | null, time: number | null) => {
    if (seq === null || time === null || time > t) return;
    if (time > bestTime || (time === bestTime && seq > best)) {
      best = seq;
      bestTime = time;
    }
  };
  for (const turn of tl.turns) {
    consider(turn.startSeq, turn.start);
    consider(turn.endSeq, turn.end);
    for (const st of turn.steps) {
      consider(st.startSeq, st.start);
      consider(st.endSeq, st.end);
    }
  }
  for (const i of tl.inputs) {
    consider(i.admittedSeq, i.admitted);
    consider(i.claimedSeq, i.claimed);
  }
  for (const p of tl.depth) consider(p.seq, p.time);
  if (tl.start !== null && t >= tl.start) consider(0, tl.start);
  return best;
};
