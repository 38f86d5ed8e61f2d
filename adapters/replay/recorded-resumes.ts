import { isKnownEvent, type LogEvent } from '../../domain/events.js';
import { foldSession } from '../../domain/session-fold.js';
import { sameJson } from '../../domain/json.js';
import { repairClosers } from '../../runtime/load-session.js';

/**
 * Where a recorded session was resumed: the points of its log at which one runtime stopped writing it and another
 * loaded it and went on. The log shows a resume in two ways. A resume after a crash inside a turn appended the closers
 * of crash repair (a `tool/result` error for each call left without one, `step/end`, `turn/end {interrupted}`): the
 * resume is where they begin. Any resume is followed, at the resumed runtime's first request, by a
 * `request/header {resume}` — a runtime writes that reason only for its own first request — so a `resume` header
 * written after the same runtime already wrote one means a resume in between. A resumed runtime does not wake on its
 * own, so that resume was while the session was idle: after the last turn's end before the header. A resume that no
 * request followed and that closed no turn left nothing in the log, and changes nothing a replay writes.
 */

/** Was a turn ended by crash repair? */
const isInterrupted = (e: LogEvent): boolean => isKnownEvent(e) && e.type === 'turn/end' && e.data.reason.kind === 'interrupted';

/** A closer of crash repair other than the `turn/end`: an interrupted call's error result, or the open step's end. */
const mayClose = (e: LogEvent): boolean =>
  isKnownEvent(e) && (e.type === 'step/end' || (e.type === 'tool/result' && e.data.error?.name === 'Interrupted'));

/**
 * Where the closers that end with the `turn/end {interrupted}` at `end` begin: the earliest position whose log,
 * repaired as a resume repairs it, gets exactly the recorded events from there to `end`; null when none does (not a
 * repair). The earliest: a later one would count a closer as written before the crash (a closed step repairs with
 * the `turn/end` alone); and where a step ended just before a crash, the repair of the log without that `step/end`
 * writes the same `step/end`.
 */
const closersStart = (recorded: readonly LogEvent[], end: number, floor: number): number | null => {
  let earliest = end;
  while (earliest - 1 > floor && mayClose(recorded[earliest - 1]!)) earliest--;
  for (let s = earliest; s <= end; s++) {
    const prefix = recorded.slice(0, s);
    const closers = repairClosers(prefix, foldSession(prefix).state);
    if (closers.length === end - s + 1 && closers.every((c, i) => c.type === recorded[s + i]!.type && sameJson(c.data, recorded[s + i]!.data))) return s;
  }
  return null;
};

/**
 * The positions of `recorded` (a session's log, from its `session/created`) at which it was resumed, in order: a
 * replay drops its runtime at each of them, as a crash or a restart did, and resumes the session from the log it wrote
 * so far. A fork's seed is its origin's history, not its own: the fork's runtime starts after its `session/end-seed`.
 */
export const resumePoints = (recorded: readonly LogEvent[]): number[] => {
  const seedLength = (recorded[0]?.data as { seedLength?: number } | undefined)?.seedLength;
  const liveStart = seedLength === undefined ? 1 : seedLength + 2;
  const points: number[] = [];
  /** Did the runtime writing the log at this point write a request/header yet? */
  let headerWritten = false;
  /** The position after the last turn's end (where a resume while idle is placed). */
  let idleFrom = liveStart;
  for (let i = liveStart; i < recorded.length; i++) {
    const e = recorded[i]!;
    if (!isKnownEvent(e)) continue;
    if (isInterrupted(e)) {
      const s = closersStart(recorded, i, points.at(-1) ?? liveStart - 1);
      if (s !== null) {
        points.push(s);
        headerWritten = false;
      }
    }
    if (e.type === 'turn/end') idleFrom = i + 1;
    else if (e.type === 'request/header') {
      if (e.data.reason === 'resume' && headerWritten && idleFrom > (points.at(-1) ?? 0)) points.push(idleFrom);
      headerWritten = true;
    }
  }
  return points;
};
