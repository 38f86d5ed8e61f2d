import { isKnownEvent, type LogEvent, type RequestContextData, type RequestHeaderData, type SessionCreatedData, type TurnEndReason } from '../../domain/events.js';
import type { ToolSpec } from '../../runtime/ports/model.js';
import { foldSession } from '../../domain/session-fold.js';

/**
 * What a replay reads from a recorded log besides its events: the system prompt and route of each request, the
 * tools it offered, how each turn ended, and whether the log can be driven at all (a replay re-drives the runtime,
 * so it needs a log the runtime wrote, with its content in clear: sealed content opened with its key, not erased).
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

/**
 * The state of the first sealed unit in `data` that is still sealed: `unavailable` (its key is not at hand),
 * `erased` (its key was destroyed), `sealed` (not opened at all); null when everything is in clear.
 */
const sealedState = (data: unknown): 'unavailable' | 'erased' | 'sealed' | null => {
  if (typeof data !== 'object' || data === null) return null;
  if (Array.isArray(data)) {
    for (const v of data) {
      const s = sealedState(v);
      if (s) return s;
    }
    return null;
  }
  for (const [k, v] of Object.entries(data)) {
    if (k === 'sealed' && typeof v === 'object' && v !== null) {
      const state = (v as { state?: unknown }).state;
      return state === 'erased' || state === 'unavailable' ? state : 'sealed';
    }
    const s = sealedState(v);
    if (s) return s;
  }
  return null;
};

/** Why the content at `seq` keeps a log from being replayed, by the state of its sealed unit. */
const sealedReason = (seq: number, state: 'unavailable' | 'erased' | 'sealed'): string =>
  state === 'erased'
    ? `seq ${seq} holds erased content (its data key was destroyed): what was recorded there is gone, so the runtime cannot be re-driven with it`
    : state === 'unavailable'
      ? `seq ${seq} holds sealed content whose data key is not at hand: give the key store it was sealed with (--keys, by default the store's own)`
      : `seq ${seq} holds sealed content: open the log with its key store first`;
/** The recorded log, read for a replay. */
export interface RecordedLog {
  readonly events: readonly LogEvent[];
  readonly created: SessionCreatedData;
  /** The tools the log's requests offered (its first `request/header`; else the names its tool calls used). */
  readonly tools: readonly ToolSpec[];
  /**
   * The tools offered by the first request from `seq` on (its `request/header`): what a runtime that resumed the
   * session there offered. Null when no request from there on recorded a header.
   */
  readonly toolsFrom: (seq: number) => readonly ToolSpec[] | null;
  /** The system prompt of step `turn.step`'s request, when the log recorded one. */
  readonly systemOf: (turn: number, step: number) => string | undefined;
  /** The route in effect for an event appended at `seq` (its request's `request/context`, else its answer's source). */
  readonly routeAt: (seq: number) => RequestContextData | null;
  /** How turn `turn` ended (null: the log ends inside it). */
  readonly endOf: (turn: number) => TurnEndReason | null;
  /**
   * The tools that ran in parallel: a call of theirs was dispatched while another call was still without its result
   * (the runtime runs a call beside another only when both tools are `parallel`; the log does not record the flag).
   */
  readonly parallelTools: ReadonlySet<string>;
}

/** Reads a log for a replay; throws {@link NotReplayableError} when the runtime cannot re-drive it. */
export const readRecordedLog = (events: readonly LogEvent[]): RecordedLog => {
  const first = events[0];
  if (!first || first.type !== 'session/created') throw new NotReplayableError('it does not start with session/created');
  const erased = events.find((e) => e.type === 'session/erased');
  if (erased) throw new NotReplayableError(`it was erased (session/erased at seq ${erased.seq}): its data keys are destroyed, so the recorded content the runtime would be re-driven with is gone`);
  for (const e of events) {
    if (!isKnownEvent(e)) throw new NotReplayableError(`seq ${e.seq} is an event of a type steerlog does not write (${e.type})`);
    const sealed = sealedState(e.data);
    if (sealed) throw new NotReplayableError(sealedReason(e.seq, sealed));
  }
  const created = first.data as SessionCreatedData;
  if (created.seedLength !== undefined && events[1]?.type !== 'session/created') {
    // steerlog seeds only forks, with the origin's first events from its session/created on
    throw new NotReplayableError(`it is seeded with ${created.seedLength} events that do not start with the origin's session/created (a seeded child, which only the reference harness writes)`);
  }
  const { error } = foldSession(events);
  if (error) throw new NotReplayableError(`it is invalid at seq ${error.seq ?? '?'} (${error.message}): a replay reproduces valid logs only`, error.seq ?? 0);
  const systems = new Map<string, string | undefined>();
  const ends = new Map<number, TurnEndReason>();
  const routes: (RequestContextData | null)[] = [];
  let tools: ToolSpec[] | null = null;
  const calledTools = new Set<string>();
  const parallelTools = new Set<string>();
  const outstanding = new Map<string, string>();
  let system: string | undefined;
  let route: RequestContextData | null = null;
  /** The step the events belong to now (`turn.step`), from its step/start. */
  let step: string | null = null;
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'request/header') {
      system = e.data.header.system;
      tools ??= [...(e.data.header.tools ?? [])];
      // a step's own header, even when nothing followed it (a crash before the answer)
      if (step !== null) systems.set(step, system);
    } else if (e.type === 'step/start') {
      step = `${e.data.turn}.${e.data.step}`;
      systems.set(step, system);
    } else if (e.type === 'request/context') route = e.data;
    else if (e.type === 'assistant/message' || e.type === 'request/error' || e.type === 'assistant/chunk') systems.set(`${e.data.turn}.${e.data.step}`, system);
    else if (e.type === 'turn/end') ends.set(e.data.turn, e.data.reason);
    else if (e.type === 'tool/call') {
      calledTools.add(e.data.name);
      if (outstanding.size > 0) for (const name of [e.data.name, ...outstanding.values()]) parallelTools.add(name);
      outstanding.set(e.data.callId, e.data.name);
    } else if (e.type === 'tool/result') outstanding.delete(e.data.message.callId);
    else if (e.type === 'step/end') outstanding.clear();
    routes.push(route);
  }
  const sources = events.map((e) => (e.type === 'assistant/message' ? ((e.data as { message: { source?: { kind: string; provider?: string; model?: string } } }).message.source ?? null) : null));
  return {
    events,
    created,
    tools: tools ?? [...calledTools].map((name) => ({ name })),
    toolsFrom: (seq) => {
      const header = events.find((e) => e.seq >= seq && e.type === 'request/header');
      return header ? [...((header.data as RequestHeaderData).header.tools ?? [])] : null;
    },
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
    parallelTools,
  };
};
