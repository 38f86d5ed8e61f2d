import type { AuditReport } from '../domain/audit.js';
import type { LogEvent } from '../domain/events.js';
import type { ActorAction } from '../domain/actor-actions.js';
import { createFateFold, type FateFold, type MessageFate } from '../domain/message-fate.js';
import { openEnvelopeNow, type Keyring } from '../runtime/content-opener.js';
import type { AuditChain, AuditOutput } from '../audit/audit-extras.js';
import { createLogAudit, type LogAudit } from '../audit/log-audit.js';

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
  /**
   * The audit report of the events up to `at`: the fold of `steerlog audit --json`, from the same function
   * (`createLogAudit`) that builds `audit` below.
   */
  readonly report: AuditReport;
  /** The hash chain's verification of the events up to `at` (`audit --json`'s `chain`, from the same function). */
  readonly chain: AuditChain;
  /**
   * When asked for (`output`): exactly what `steerlog audit --store … <sessionId> --json` prints of the events up to
   * `at` (with `--at <at>` when one was asked for), from the same function (`createLogAudit`): the fold's report,
   * the chain, each input's fate, the times, the sealed content, the actions. Only `storeNotes` (what reading a
   * store noticed) is the CLI's own.
   */
  readonly audit?: AuditOutput;
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
  /** Also give the whole `audit --json` object (`SessionAudit.audit`; a long log's is several times the report). @defaultValue false */
  readonly output?: boolean;
}

/**
 * Both folds of one log, advanced together: the audit of `steerlog audit` (`createLogAudit`: the fold, the chain,
 * the extras) over the envelopes as stored, and the fates of the session fold over them opened (the previews).
 */
interface Folds {
  readonly audit: LogAudit;
  readonly fates: FateFold;
  readonly keyring: Keyring | null;
  /** seq of the last event pushed, -1 before any. */
  pos: number;
  /** id of that event: a log that no longer has it there is another log. */
  lastId: string | null;
}

const newFolds = (sessionId: string, keyring: Keyring | null): Folds => ({ audit: createLogAudit(sessionId, keyring), fates: createFateFold(), keyring, pos: -1, lastId: null });

/** Pushes one event into both folds; a promise only when opening its sealed content waits for a key. */
const advance = (folds: Folds, e: LogEvent): Promise<void> | undefined => {
  folds.audit.push(e);
  const fate = (opened: unknown): void => {
    folds.fates.push(opened as LogEvent);
    folds.pos = e.seq;
    folds.lastId = e.id;
  };
  // sealed content opened for the previews where a key allows (the audit opens its own, for its `content`)
  const opening = folds.keyring ? openEnvelopeNow(e, folds.keyring) : e;
  if (opening instanceof Promise) return opening.then(fate);
  fate(opening);
  return undefined;
};

const answer = async (sessionId: string, lastSeq: number, at: number, atTime: number | null, folds: Folds, request: AuditSessionOptions): Promise<SessionAudit> => {
  const messageId = request.messageId;
  const report = folds.audit.report();
  const chain = await folds.audit.chain();
  const audit = request.output === true ? await folds.audit.output(request.at === undefined ? null : { seq: at }) : undefined;
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
    chain,
    ...(audit !== undefined ? { audit } : {}),
    pending: { nextTurn: report.inbox.nextTurn.map(byId), nextStep: report.inbox.nextStep.map(byId) },
    inputs: [...fates.values()].map(input),
    ...(messageId !== undefined ? { message: message ? { ...message, entries: [...message.entries] } : null } : {}),
    actions: [...folds.fates.actions],
  };
};

const clampAt = (events: readonly LogEvent[], at: number | undefined): number => Math.max(-1, Math.min(events.length - 1, at ?? events.length - 1));

/**
 * Folds a session's log up to a seq for the console: `steerlog audit --json`'s answer from the same function
 * (`createLogAudit`, chain included), plus the per-message fates of the session fold. `events` are the envelopes
 * as stored (the chain covers the stored form: sealed content sealed); `keyring` opens sealed content (null: none).
 */
export const auditSession = async (sessionId: string, events: readonly LogEvent[], options: AuditSessionOptions = {}, keyring: Keyring | null = null): Promise<SessionAudit> => {
  const at = clampAt(events, options.at);
  const folds = newFolds(sessionId, keyring);
  for (let i = 0; i <= at; i++) {
    const opening = advance(folds, events[i]!);
    if (opening) await opening;
  }
  return answer(sessionId, events.length - 1, at, events[at]?.time ?? null, folds, options);
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
  const run = async (sessionId: string, events: readonly LogEvent[], request: AuditSessionOptions, keyring: Keyring | null): Promise<SessionAudit> => {
    const at = clampAt(events, request.at);
    let folds = cache.get(sessionId);
    cache.delete(sessionId);
    if (!folds || folds.pos > at || (folds.pos >= 0 && events[folds.pos]?.id !== folds.lastId)) folds = newFolds(sessionId, keyring);
    cache.set(sessionId, folds);
    while (cache.size > max) cache.delete(cache.keys().next().value!);
    for (let i = folds.pos + 1, n = 0; i <= at; i++, n++) {
      if (n > 0 && n % every === 0) await new Promise((resolve) => setTimeout(resolve, 0));
      const opening = advance(folds, events[i]!);
      if (opening) await opening;
    }
    return answer(sessionId, events.length - 1, at, events[at]?.time ?? null, folds, request);
  };
  return {
    /** `events` and `keyring` as {@link auditSession} takes them (folds kept from an earlier request keep theirs). */
    audit(sessionId: string, events: readonly LogEvent[], request: AuditSessionOptions = {}, keyring: Keyring | null = null): Promise<SessionAudit> {
      const previous = turns.get(sessionId) ?? Promise.resolve();
      const next = previous.catch(() => {}).then(() => run(sessionId, events, request, keyring));
      turns.set(sessionId, next);
      void next.finally(() => turns.get(sessionId) === next && turns.delete(sessionId)).catch(() => {});
      return next;
    },
  };
};
