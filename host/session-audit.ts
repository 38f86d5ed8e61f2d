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
  /** time of that event (ms since the epoch); null before any. */
  lastTime: number | null;
}

const newFolds = (sessionId: string, keyring: Keyring | null): Folds => ({ audit: createLogAudit(sessionId, keyring), fates: createFateFold(), keyring, pos: -1, lastId: null, lastTime: null });

/** Pushes one event into both folds; a promise only when opening its sealed content waits for a key. */
const advance = (folds: Folds, e: LogEvent): Promise<void> | undefined => {
  folds.audit.push(e);
  const fate = (opened: unknown): void => {
    folds.fates.push(opened as LogEvent);
    folds.pos = e.seq;
    folds.lastId = e.id;
    folds.lastTime = e.time;
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

/**
 * A session's log read by seq, for {@link SessionAuditCache.auditLog}: the cache reads only the events its folds have
 * not passed, so a long log is never held whole (the console's route reads a stored session from the store by range).
 */
export interface AuditLogSource {
  /** seq of the log's last event; -1 when it has none. */
  readonly lastSeq: number;
  /** The events with seq in `[from, to)`, in order, a page at a time (fewer when the log ends first). */
  read(from: number, to: number): AsyncIterable<readonly LogEvent[]>;
}

/** Events an array source hands out at a time. */
const ARRAY_PAGE = 2000;

/**
 * An {@link AuditLogSource} over events held in memory: `events[i]` has seq `base + i` (a live session's window starts
 * at its agent's `base`); seqs before `base` are not in it.
 *
 * @param base the seq of `events[0]`. @defaultValue 0
 */
export const arrayLogSource = (events: readonly LogEvent[], base = 0): AuditLogSource => ({
  lastSeq: base + events.length - 1,
  async *read(from, to) {
    const end = Math.min(to - base, events.length);
    for (let i = Math.max(0, from - base); i < end; i += ARRAY_PAGE) yield events.slice(i, Math.min(end, i + ARRAY_PAGE));
  },
});

/** Options of {@link createSessionAuditCache}. */
export interface SessionAuditCacheOptions {
  /** Sessions whose folds are kept. @defaultValue 4 */
  readonly sessions?: number;
  /**
   * The most events the kept folds may have passed together: older folds are dropped past it (the fold of the session
   * asked last is always kept, so a scrubber or a page of rows does not fold again). A fold's report grows with its
   * log, so this bounds what audits of long sessions leave held. @defaultValue 100000
   */
  readonly events?: number;
  /** Events folded between two yields to the event loop, so a long fold never stalls the host. @defaultValue 2000 */
  readonly yieldEvery?: number;
}

/** What {@link createSessionAuditCache} returns. */
export interface SessionAuditCache {
  /** `events` and `keyring` as {@link auditSession} takes them (folds kept from an earlier request keep theirs). */
  audit(sessionId: string, events: readonly LogEvent[], request?: AuditSessionOptions, keyring?: Keyring | null): Promise<SessionAudit>;
  /**
   * The same answer from a log read by seq: only the events after those the kept folds passed are read (and the one
   * they passed last, to check it is still there), so the log is never held whole.
   */
  auditLog(sessionId: string, log: AuditLogSource, request?: AuditSessionOptions, keyring?: Keyring | null): Promise<SessionAudit>;
}

/**
 * {@link auditSession} for a scrubber: per session the folds stay where the last request left them, so moving
 * forward folds only the new events; moving back (or a log that changed under them) folds again from the start.
 * Long folds yield to the event loop every `yieldEvery` events. The kept folds are bounded by sessions and by the
 * events they passed (`events`).
 */
export const createSessionAuditCache = (options: SessionAuditCacheOptions = {}): SessionAuditCache => {
  const max = options.sessions ?? 4;
  const budget = options.events ?? 100_000;
  const every = options.yieldEvery ?? 2000;
  const cache = new Map<string, Folds>();
  /** Per session, the request folding now: requests of one session take turns, so no two advance the same folds. */
  const turns = new Map<string, Promise<unknown>>();
  const evict = (): void => {
    // oldest first; the newest (the session asked last) always stays
    let held = 0;
    for (const f of cache.values()) held += f.pos + 1;
    for (const [id, f] of cache) {
      if (cache.size <= 1 || (cache.size <= max && held <= budget)) break;
      cache.delete(id);
      held -= f.pos + 1;
    }
  };
  /** The event at `folds.pos` is still the one the folds passed (a log that changed under them is another log). */
  const still = async (folds: Folds, log: AuditLogSource): Promise<boolean> => {
    if (folds.pos < 0) return true;
    for await (const page of log.read(folds.pos, folds.pos + 1)) return page[0]?.id === folds.lastId;
    return false;
  };
  const run = async (sessionId: string, log: AuditLogSource, request: AuditSessionOptions, keyring: Keyring | null): Promise<SessionAudit> => {
    const at = Math.max(-1, Math.min(log.lastSeq, request.at ?? log.lastSeq));
    let folds = cache.get(sessionId);
    cache.delete(sessionId);
    if (!folds || folds.pos > at || !(await still(folds, log))) folds = newFolds(sessionId, keyring);
    // folds left part way (a read or an opening that failed) are not kept: they were taken out of the cache above
    let n = 0;
    if (folds.pos < at) {
      for await (const page of log.read(folds.pos + 1, at + 1)) {
        for (const e of page) {
          if (n > 0 && n % every === 0) await new Promise((resolve) => setTimeout(resolve, 0));
          n++;
          const opening = advance(folds, e);
          if (opening) await opening;
        }
      }
    }
    if (folds.pos !== at) throw new Error(`the log of ${sessionId} ended at seq ${folds.pos}, before seq ${at} it said it holds`);
    cache.set(sessionId, folds);
    evict();
    return answer(sessionId, log.lastSeq, at, folds.pos >= 0 ? folds.lastTime : null, folds, request);
  };
  const queued = (sessionId: string, work: () => Promise<SessionAudit>): Promise<SessionAudit> => {
    const previous = turns.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(work);
    turns.set(sessionId, next);
    void next.finally(() => turns.get(sessionId) === next && turns.delete(sessionId)).catch(() => {});
    return next;
  };
  return {
    audit: (sessionId, events, request = {}, keyring = null) => queued(sessionId, () => run(sessionId, arrayLogSource(events), request, keyring)),
    auditLog: (sessionId, log, request = {}, keyring = null) => queued(sessionId, () => run(sessionId, log, request, keyring)),
  };
};
