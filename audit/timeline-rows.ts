import type { SessionTimeline, TimelineInput, TimelineTurn } from './session-timeline.js';

/**
 * One row of the console's turn list: the timeline's turn (seqs, times, how it ended) with its steps counted, and
 * what it claimed.
 */
export interface TurnRow extends Omit<TimelineTurn, 'steps'> {
  /** How many steps it started. */
  readonly steps: number;
  /** The inputs it claimed, in the order of their claims: id, text and the class each entered with. */
  readonly claimed: readonly { readonly id: string; readonly text: string; readonly class: TimelineInput['class'] }[];
}

/** A page of the turn list: rows `from` (an index into the session's turns) on, and how many turns there are. */
export interface TurnPage {
  readonly sessionId: string;
  readonly total: number;
  readonly from: number;
  readonly rows: readonly TurnRow[];
}

/** Per timeline, its claimed inputs grouped by turn (built once, on the first page asked of it). */
const claimsByTurn = new WeakMap<SessionTimeline, Map<number, TimelineInput[]>>();

const claimsOf = (tl: SessionTimeline): Map<number, TimelineInput[]> => {
  const held = claimsByTurn.get(tl);
  if (held) return held;
  const by = new Map<number, TimelineInput[]>();
  for (const i of tl.inputs) {
    if (i.turn === null || i.claimedSeq === null) continue;
    const list = by.get(i.turn) ?? by.set(i.turn, []).get(i.turn)!;
    list.push(i);
  }
  for (const list of by.values()) list.sort((a, b) => a.claimedSeq! - b.claimedSeq!);
  claimsByTurn.set(tl, by);
  return by;
};

/**
 * Turns `from` to `to` (indexes, `to` exclusive, clamped to the session's turns) of `tl` as the console's turn list
 * shows them. The rows are the timeline's turns with the inputs the timeline says each claimed: the same turns, seqs,
 * reasons, step counts and claims as `steerlog audit --json`'s `turns` (the tests compare them).
 */
export const turnPage = (tl: SessionTimeline, from: number, to: number): TurnPage => {
  const total = tl.turns.length;
  const a = Math.max(0, Math.min(total, Math.floor(from)));
  const b = Math.max(a, Math.min(total, Math.floor(to)));
  const claims = claimsOf(tl);
  const rows = tl.turns.slice(a, b).map((t) => ({
    turn: t.turn,
    startSeq: t.startSeq,
    start: t.start,
    endSeq: t.endSeq,
    end: t.end,
    reason: t.reason,
    steps: t.steps.length,
    claimed: (claims.get(t.turn) ?? []).map((i) => ({ id: i.id, text: i.text, class: i.class })),
  }));
  return { sessionId: tl.sessionId, total, from: a, rows };
};

/** Per timeline, each input id's last admission. */
const lastAdmission = new WeakMap<SessionTimeline, Map<string, TimelineInput>>();

/** What the timeline knows of each of `ids` (its last admission: text, actor, class, times); ids it never saw are left out. */
export const inputsById = (tl: SessionTimeline, ids: readonly string[]): TimelineInput[] => {
  let by = lastAdmission.get(tl);
  if (!by) {
    by = new Map(tl.inputs.map((i) => [i.id, i]));
    lastAdmission.set(tl, by);
  }
  const out: TimelineInput[] = [];
  for (const id of new Set(ids)) {
    const i = by.get(id);
    if (i) out.push(i);
  }
  return out;
};
