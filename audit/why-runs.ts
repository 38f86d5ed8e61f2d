import type { ChildrenState } from '../domain/children/child-edges.js';
import type { ChildMode, ChildStopReason } from '../domain/children/subagent-events.js';

/**
 * The child runs an id names in a parent's log, for `steerlog why`: a run id (`subagent/start {runId}`) names that
 * run; a child's session id names every run of that child. A run is closed when its `subagent/end` is in the log.
 */
export interface WhyRun {
  readonly runId: string;
  readonly childSessionId: string;
  readonly mode: ChildMode | null;
  readonly epoch: number;
  readonly startSeq: number;
  /** seq of its `subagent/end`; null while the run is open. */
  readonly endSeq: number | null;
  readonly stopReason: ChildStopReason | null;
}

/** The runs `id` names in the children state of a log (a fold of `evolveChildren`), in the order they started. */
export const runsNamed = (children: ChildrenState, id: string): WhyRun[] =>
  [...children.children.values()].flatMap((record) =>
    record.epochs
      .filter((e) => e.runId === id || record.childSessionId === id)
      .map((e) => ({ runId: e.runId, childSessionId: record.childSessionId, mode: record.mode, epoch: e.epoch, startSeq: e.startSeq, endSeq: e.endSeq, stopReason: e.stopReason })),
  );

/** One run, as the human answer shows it. */
export const describeRun = (r: WhyRun): string =>
  `run ${r.runId} of child ${r.childSessionId} (${r.mode ?? 'unknown mode'}, epoch ${r.epoch}): started at seq ${r.startSeq}, ${
    r.endSeq === null ? 'still OPEN' : `ended at seq ${r.endSeq}: ${r.stopReason}`
  }`;
