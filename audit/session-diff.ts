import { isKnownEvent, type LogEvent } from '../domain/events.js';
import { sameJson } from '../domain/json.js';

/**
 * Two session logs compared (`steerlog diff`): the first seq at which they differ, then turn by turn — the inputs
 * that entered, the claims, the model's answers, the tool calls and results, and how the turn ended — ignoring
 * what must differ between two sessions: event ids, times, hashes, metadata, and the session's own id, creation
 * time and lineage in `session/created`.
 */

/** What one turn did, in the terms the comparison uses. */
export interface TurnSummary {
  readonly turn: number;
  /** The ids of the inputs claimed by the turn's splices. */
  readonly claimed: readonly string[];
  /** The inputs that entered (their `user/message`s): id and text. */
  readonly entered: readonly { readonly id: string; readonly text: string }[];
  /** Each answer: its text (text blocks joined) and its tool calls. */
  readonly answers: readonly { readonly text: string; readonly toolCalls: readonly { readonly name: string; readonly arguments: string }[] }[];
  /** Each tool result: the tool's call id, its text, whether it is an error. */
  readonly results: readonly { readonly callId: string; readonly text: string; readonly isError: boolean }[];
  readonly steps: number;
  /** The turn/end reason kind (null: the log ends inside the turn). */
  readonly end: string | null;
}

/** One turn compared. */
export interface TurnComparison {
  readonly turn: number;
  readonly same: boolean;
  readonly a: TurnSummary | null;
  readonly b: TurnSummary | null;
}

/** Two logs compared. */
export interface SessionDiff {
  readonly equal: boolean;
  /** The first seq (of `a`) whose event differs from `b`'s (or exists in one log only); null when equal. */
  readonly firstDivergentSeq: number | null;
  /** `b`'s seq of an event at `a`'s seq n is n + shift: 1 when `b` is a fork of `a` (its own session/created comes first), −1 the other way, else 0. */
  readonly shift: number;
  /** The two events at that seq, normalized (null where a log has none). */
  readonly divergence: { readonly a: unknown; readonly b: unknown } | null;
  /** When one log is a fork of the other: the origin's seq the fork branched at (its seed length: the origin's events before it are the fork's seed). */
  readonly forkPoint: number | null;
  readonly events: { readonly a: number; readonly b: number };
  /** Every turn of either log, compared. */
  readonly turns: readonly TurnComparison[];
}

/** An event as the comparison sees it: no id, time, hash or metadata; `session/created` without identity and lineage; a `chain/head` without its hash and signature. */
export const normalizedEvent = (e: LogEvent): { readonly type: string; readonly data: unknown; readonly ignorable?: true } => {
  let data = e.data;
  if (e.type === 'session/created') {
    const { sessionId: _s, createdAt: _c, parentSession: _p, seedLength: _l, origin: _o, ...rest } = e.data as Record<string, unknown>;
    data = rest;
  }
  // a signed head signs the chain's hash, which covers ids and times: only where it stands and who signed compare
  if (e.type === 'chain/head') data = { seq: (e.data as { seq: number }).seq, keyId: (e.data as { keyId: string }).keyId };
  return { type: e.type, data, ...(e.ignorable ? { ignorable: true as const } : {}) };
};

const textOf = (content: readonly { readonly type: string; readonly text?: string }[]): string => content.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('');

/** The turns of a log, summarized. */
export const turnSummaries = (events: readonly LogEvent[]): TurnSummary[] => {
  const out: TurnSummary[] = [];
  let open: { turn: number; claimed: string[]; entered: TurnSummary['entered'][number][]; answers: TurnSummary['answers'][number][]; results: TurnSummary['results'][number][]; steps: number } | null = null;
  const close = (end: string | null) => {
    if (open) out.push({ ...open, end });
    open = null;
  };
  const inserted = new Map<string, string>();
  const lists: Record<string, string[]> = { 'next-turn': [], 'next-step': [] };
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    switch (e.type) {
      case 'agent/inbox/spliced': {
        const list = lists[e.data.target]!;
        const removed = list.splice(e.data.start, e.data.removedCount ?? 0, ...e.data.inserted.map((m) => m.id));
        for (const m of e.data.inserted) inserted.set(m.id, textOf(m.content));
        if (open && e.data.outcome === undefined && e.data.removedCount !== undefined) open.claimed.push(...removed);
        break;
      }
      case 'turn/start':
        close(null);
        open = { turn: e.data.turn, claimed: [], entered: [], answers: [], results: [], steps: 0 };
        break;
      case 'step/start':
        if (open) open.steps++;
        break;
      case 'user/message':
        open?.entered.push({ id: e.data.id, text: textOf(e.data.content) });
        break;
      case 'assistant/message':
        open?.answers.push({
          text: textOf(e.data.message.content),
          toolCalls: e.data.message.content.flatMap((b) => (b.type === 'tool-call' ? [{ name: b.name, arguments: b.arguments }] : [])),
        });
        break;
      case 'tool/result':
        open?.results.push({ callId: e.data.message.callId, text: textOf(e.data.message.content), isError: e.data.message.isError === true });
        break;
      case 'turn/end':
        close(e.data.reason.kind);
        break;
      default:
        break;
    }
  }
  close(null);
  return out;
};

const normalizedOrNull = (e: LogEvent | undefined) => (e === undefined ? null : normalizedEvent(e));

/** Compares two logs (each in seq order). */
export const diffSessions = (a: readonly LogEvent[], b: readonly LogEvent[]): SessionDiff => {
  const createdA = a[0]?.type === 'session/created' ? (a[0].data as { sessionId: string; parentSession?: string; seedLength?: number }) : null;
  const createdB = b[0]?.type === 'session/created' ? (b[0].data as { sessionId: string; parentSession?: string; seedLength?: number }) : null;
  // a fork's log is its own session/created, then the origin's events: a fork's seq n is its origin's seq n − 1
  const bForksA = createdA !== null && createdB !== null && createdB.parentSession === createdA.sessionId && createdB.seedLength !== undefined;
  const aForksB = createdA !== null && createdB !== null && createdA.parentSession === createdB.sessionId && createdA.seedLength !== undefined;
  const shift = bForksA ? 1 : aForksB ? -1 : 0;
  const forkPoint = bForksA ? createdB!.seedLength! : aForksB ? createdA!.seedLength! : null;
  let first: number | null = null;
  const from = shift === 0 ? 0 : 1;
  for (let i = from; i < Math.max(a.length, b.length - shift); i++) {
    const x = a[i];
    const y = b[i + shift];
    if (x === undefined || y === undefined || !sameJson(normalizedEvent(x), normalizedEvent(y))) {
      first = i;
      break;
    }
  }
  const ta = turnSummaries(a);
  const tb = turnSummaries(b);
  const numbers = [...new Set([...ta.map((t) => t.turn), ...tb.map((t) => t.turn)])].sort((x, y) => x - y);
  const turns = numbers.map((n) => {
    const sa = ta.find((t) => t.turn === n) ?? null;
    const sb = tb.find((t) => t.turn === n) ?? null;
    return { turn: n, same: sa !== null && sb !== null && sameJson(sa, sb), a: sa, b: sb };
  });
  return {
    equal: first === null,
    firstDivergentSeq: first,
    divergence: first === null ? null : { a: normalizedOrNull(a[first]), b: normalizedOrNull(b[first + shift]) },
    shift,
    forkPoint,
    events: { a: a.length, b: b.length },
    turns,
  };
};
