import { createAuditor, type AuditReport, type Auditor } from '../domain/audit.js';
import type { LogEvent } from '../domain/events.js';
import type { ActorAction } from '../domain/actor-actions.js';
import { createFateFold, type FateFold, type MessageFate } from '../domain/message-fate.js';

/** One row of the console's input list: a message id, its source kind, a preview and the last thing that happened to it. */
export interface AuditInput {
  readonly id: string;
  readonly source: string;
  readonly preview: string;
  /** Who admitted it (its last admission's actor), null when the log names nobody. */
  readonly actor: string | null;
  readonly last: MessageFate['entries'][number]['kind'] | null;
}

/** What the console's audit view shows of a session folded up to one seq. */
export interface SessionAudit {
  readonly sessionId: string;
  /** seq of the log's last event. */
  readonly lastSeq: number;
  /** The seq the log was folded up to (inclusive). */
  readonly at: number;
  /** The time of the event at `at` (ms since the epoch); null before the first event. */
  readonly atTime: number | null;
  /** The audit report of the events up to `at`: the same derivation as `steerlog audit --json`. */
  readonly report: AuditReport;
  /** Both pending lists at `at`, with previews. */
  readonly pending: { readonly nextTurn: readonly AuditInput[]; readonly nextStep: readonly AuditInput[] };
  /** Every message id the log mentions up to `at`, in order of first appearance. */
  readonly inputs: readonly AuditInput[];
  /** When asked for one id: everything that happened to it up to `at`. */
  readonly message?: MessageFate | null;
  /** Every admission and control action up to `at`, with its actor (the same list as `audit --json`'s `actions`). */
  readonly actions: readonly ActorAction[];
}

/** Options of {@link auditSession}. */
export interface AuditSessionOptions {
  /** Fold up to and including this seq. @defaultValue the last event */
  readonly at?: number;
  /** Also answer "what happened to this input?" for this message id. @defaultValue none */
  readonly messageId?: string;
}

/**
 * The envelope `steerlog audit` reads for an event (its line, without the line): a fresh object the auditor owns,
 * so it is validated as parsed JSON (`pushValue`) instead of being written out as a line and parsed back. The data
 * is the event's own, checked as it stands (a value that is not lossless JSON is refused as a line of it would be).
 */
const envelopeOf = (e: LogEvent): Record<string, unknown> => ({ seq: e.seq, id: e.id, time: e.time, type: e.type, data: e.data, ...(e.ignorable ? { ignorable: true } : {}) });

/** Both folds of one log, advanced together: the CLI's auditor and the fates of the session fold. */
interface Folds {
  readonly auditor: Auditor;
  readonly fates: FateFold;
  /** seq of the last event pushed, -1 before any. */
  pos: number;
  /** id of that event: a log that no longer has it there is another log. */
  lastId: string | null;
}

const newFolds = (sessionId: string): Folds => ({ auditor: createAuditor(sessionId), fates: createFateFold(), pos: -1, lastId: null });

const advance = (folds: Folds, e: LogEvent): void => {
  folds.auditor.pushValue(envelopeOf(e));
  folds.fates.push(e);
  folds.pos = e.seq;
  folds.lastId = e.id;
};

const answer = (sessionId: string, lastSeq: number, at: number, atTime: number | null, folds: Folds, messageId: string | undefined): SessionAudit => {
  const report = folds.auditor.report();
  const fates = folds.fates.fates;
  const admittedBy = (f: MessageFate): string | null => {
    for (let i = f.entries.length - 1; i >= 0; i--) {
      const e = f.entries[i]!;
      if (e.kind === 'admitted') return e.actor;
    }
    return null;
  };
  const input = (f: MessageFate): AuditInput => ({ id: f.id, source: f.source, preview: f.preview, actor: admittedBy(f), last: f.entries.at(-1)?.kind ?? null });
  const byId = (id: string): AuditInput => {
    const f = fates.get(id);
    return f ? input(f) : { id, source: 'unknown', preview: '', actor: null, last: null };
  };
  const message = messageId === undefined ? undefined : fates.get(messageId);
  return {
    sessionId,
    lastSeq,
    at,
    atTime,
    report,
    pending: { nextTurn: report.inbox.nextTurn.map(byId), nextStep: report.inbox.nextStep.map(byId) },
    inputs: [...fates.values()].map(input),
    ...(messageId !== undefined ? { message: message ? { ...message, entries: [...message.entries] } : null } : {}),
    actions: [...folds.fates.actions],
  };
};

const clampAt = (events: readonly LogEvent[], at: number | undefined): number => Math.max(-1, Math.min(events.length - 1, at ?? events.length - 1));

/**
 * Folds a session's log up to a seq for the console: the audit report through the same auditor the CLI's `audit`
 * runs (each event as its JSONL envelope), plus the per-message fates of the session fold.
 */
export const auditSession = (sessionId: string, events: readonly LogEvent[], options: AuditSessionOptions = {}): SessionAudit => {
  const at = clampAt(events, options.at);
  const folds = newFolds(sessionId);
  for (let i = 0; i <= at; i++) advance(folds, events[i]!);
  return answer(sessionId, events.length - 1, at, events[at]?.time ?? null, folds, options.messageId);
};

/** Options of {@link createSessionAuditCache}. */
export interface SessionAuditCacheOptions {
  /** Sessions whose folds are kept. @defaultValue 4 */
  readonly sessions?: number;
  /** Events folded between two yields to the event loop, so a long fold never stalls the host. @defaultValue 2000 */
  readonly yieldEvery?: number;
}

/**
 * {@link auditSession} for a scrubber: per session the folds stay where the last request left them, so moving
 * forward folds only the new events; moving back (or a log that changed under them) folds again from the start.
 * Long folds yield to the event loop every `yieldEvery` events.
 */
export const createSessionAuditCache = (options: SessionAuditCacheOptions = {}) => {
  const max = options.sessions ?? 4;
  const every = options.yieldEvery ?? 2000;
  const cache = new Map<string, Folds>();
  /** Per session, the request folding now: requests of one session take turns, so no two advance the same folds. */
  const turns = new Map<string, Promise<unknown>>();
  const run = async (sessionId: string, events: readonly LogEvent[], request: AuditSessionOptions): Promise<SessionAudit> => {
    const at = clampAt(events, request.at);
    let folds = cache.get(sessionId);
    cache.delete(sessionId);
    if (!folds || folds.pos > at || (folds.pos >= 0 && events[folds.pos]?.id !== folds.lastId)) folds = newFolds(sessionId);
    cache.set(sessionId, folds);
    while (cache.size > max) cache.delete(cache.keys().next().value!);
    for (let i = folds.pos + 1, n = 0; i <= at; i++, n++) {
      if (n > 0 && n % every === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      advance(folds, events[i]!);
    }
    return answer(sessionId, events.length - 1, at, events[at]?.time ?? null, folds, request.messageId);
  };
  return {
    audit(sessionId: string, events: readonly LogEvent[], request: AuditSessionOptions = {}): Promise<SessionAudit> {
      const previous = turns.get(sessionId) ?? Promise.resolve();
      const next = previous.catch(() => {}).then(() => run(sessionId, events, request));
      turns.set(sessionId, next);
      void next.finally(() => turns.get(sessionId) === next && turns.delete(sessionId)).catch(() => {});
      return next;
    },
  };
};
