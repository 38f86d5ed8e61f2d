import { isKnownEvent, type LogEvent, type RequestContextData, type SessionCreatedData, type TurnEndReason } from '../../domain/events.js';
import type { ToolSpec } from '../../runtime/ports/model.js';
import { foldSession } from '../../domain/session-fold.js';

/**
 * What a replay reads from a recorded log besides its events: the system prompt and route of each request, the
 * tools it offered, how each turn ended, and whether the log can be driven at all (a replay re-drives the runtime,
 * so it needs a log the runtime wrote: one session, no children, no sealed content).
 */

/** Why a log cannot be replayed. Stable `code`: `not-replayable`. */
export class NotReplayableError extends Error {
  readonly code = 'not-replayable' as const;
  /** `invalidAt`: the seq of the first invalid event, when that is why (a replay reproduces valid logs only). */
  constructor(
    readonly reason: string,
    readonly invalidAt: number | null = null,
  ) {
    super(`the log cannot be replayed: ${reason}`);
    this.name = 'NotReplayableError';
  }
}
/** Is this a {@link NotReplayableError}? (by its stable `code`) */
export const isNotReplayableError = (e: unknown): e is NotReplayableError =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'not-replayable';

/** Events a replay cannot re-drive (children are separate sessions; an erased session's content is gone). */
const UNDRIVABLE: Readonly<Record<string, string>> = {
  'subagent/descriptor': 'it is a child session (subagent/descriptor)',
  'subagent/start': 'it starts child sessions (subagent/start)',
  'subagent/end': 'it starts child sessions (subagent/end)',
  'session/erased': 'it was erased (session/erased)',
};

const hasSealed = (data: unknown): boolean => {
  if (typeof data !== 'object' || data === null) return false;
  if (Array.isArray(data)) return data.some(hasSealed);
  return Object.entries(data).some(([k, v]) => k === 'sealed' || hasSealed(v));
};

/** The recorded log, read for a replay. */
export interface RecordedLog {
  readonly events: readonly LogEvent[];
  readonly created: SessionCreatedData;
  /** The tools the log's requests offered (its first `request/header`; else the names its tool calls used). */
  readonly tools: readonly ToolSpec[];
  /** The system prompt of step `turn.step`'s request, when the log recorded one. */
  readonly systemOf: (turn: number, step: number) => string | undefined;
  /** The route in effect for an event appended at `seq` (its request's `request/context`, else its answer's source). */
  readonly routeAt: (seq: number) => RequestContextData | null;
  /** How turn `turn` ended (null: the log ends inside it). */
  readonly endOf: (turn: number) => TurnEndReason | null;
}

/** Reads a log for a replay; throws {@link NotReplayableError} when the runtime cannot re-drive it. */
export const readRecordedLog = (events: readonly LogEvent[]): RecordedLog => {
  const first = events[0];
  if (!first || first.type !== 'session/created') throw new NotReplayableError('it does not start with session/created');
  for (const e of events) {
    if (!isKnownEvent(e)) throw new NotReplayableError(`seq ${e.seq} is an event of a type steerlog does not write (${e.type})`);
    const why = UNDRIVABLE[e.type];
    if (why) throw new NotReplayableError(why);
    if (hasSealed(e.data)) throw new NotReplayableError(`seq ${e.seq} holds sealed content (open it with its key first)`);
  }
  const { error } = foldSession(events);
  if (error) throw new NotReplayableError(`it is invalid at seq ${error.seq ?? '?'} (${error.message}): a replay reproduces valid logs only`, error.seq ?? 0);
  const systems = new Map<string, string | undefined>();
  const ends = new Map<number, TurnEndReason>();
  const routes: (RequestContextData | null)[] = [];
  let tools: ToolSpec[] | null = null;
  const calledTools = new Set<string>();
  let system: string | undefined;
  let route: RequestContextData | null = null;
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'request/header') {
      system = e.data.header.system;
      tools ??= [...(e.data.header.tools ?? [])];
    } else if (e.type === 'request/context') route = e.data;
    else if (e.type === 'assistant/message' || e.type === 'request/error' || e.type === 'assistant/chunk') systems.set(`${e.data.turn}.${e.data.step}`, system);
    else if (e.type === 'turn/end') ends.set(e.data.turn, e.data.reason);
    else if (e.type === 'tool/call') calledTools.add(e.data.name);
    routes.push(route);
  }
  const sources = events.map((e) => (e.type === 'assistant/message' ? ((e.data as { message: { source?: { kind: string; provider?: string; model?: string } } }).message.source ?? null) : null));
  return {
    events,
    created: first.data as SessionCreatedData,
    tools: tools ?? [...calledTools].map((name) => ({ name })),
    systemOf: (turn, step) => (systems.has(`${turn}.${step}`) ? systems.get(`${turn}.${step}`) : system),
    routeAt: (seq) => {
      // the request/header and request/context of a request precede it by at most two events
      const recorded = routes[Math.min(seq + 1, routes.length - 1)] ?? null;
      if (recorded) return recorded;
      for (let i = seq; i < sources.length; i++) {
        const s = sources[i];
        if (s?.kind === 'model' && s.provider !== undefined) return { provider: s.provider, model: s.model ?? 'unknown' };
      }
      return null;
    },
    endOf: (turn) => ends.get(turn) ?? null,
  };
};
