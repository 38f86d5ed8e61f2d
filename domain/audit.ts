import * as E from 'fp-ts/lib/Either.js';
import { isKnownEvent, type LogEvent } from './events.js';
import {
  claimedFacts,
  initialMessageFactState,
  stepMessageFactRecords,
  turnEndedFacts,
  type MessageFact,
  type MessageFactRecordOptions,
  type MessageFactState,
  type SpliceClaim,
  type TurnEnded,
} from './message-facts.js';
import { parseEvent, parseLogLine } from './parse-event.js';
import type { MessageClass } from './history-classification.js';
import { nextStepItems, nextTurnItems } from './inbox/inbox-state.js';
import { queueView, type QueuePlacement } from './queue-view.js';
import { initialSessionState, openTurnClaimedIds, stepSession, type SessionState, type SessionStep, type StepSessionOptions } from './session-fold.js';
import type { DomainError, DomainErrorCode, EventParseError } from './errors.js';
import { evolveChildren, initialChildrenState, type ChildRecord, type ChildrenState } from './children/child-edges.js';
import { childrenStream, type ChildListSink } from './children/child-stream.js';

/** The audit of one session log: what `steerlog audit --json` prints. */
export interface AuditReport {
  readonly stream: string;
  /** Events read and applied (the fold stops at the first invalid one). */
  readonly events: number;
  readonly ok: boolean;
  readonly errors: readonly { readonly seq: number | null; readonly code: DomainErrorCode; readonly message: string }[];
  readonly inbox: { readonly nextTurn: readonly string[]; readonly nextStep: readonly string[] };
  readonly turns: readonly {
    readonly turn: number;
    readonly startSeq: number;
    readonly endSeq: number | null;
    readonly reason: string | null;
    readonly steps: number;
    readonly claimed: readonly string[];
    /** Present when a model request of the turn failed: each failed attempt (a `request/error` event), in log order. */
    readonly failedRequests?: readonly FailedRequest[];
  }[];
  readonly consumedWork: { readonly endSeq: number | null; readonly endTurn: number | null; readonly droppedUnrun: boolean };
  readonly messages: readonly { readonly seq: number; readonly id: string; readonly class: MessageClass }[];
  readonly queue: readonly { readonly id: string; readonly placement: QueuePlacement }[];
  /** Present when the session has children: each with its epochs, reports and settlements (from this log alone). */
  readonly children?: readonly ChildRecord[];
  /** Present when the session is a child (or a fork): its parent, origin and delegation depth. */
  readonly lineage?: NonNullable<ChildrenState['lineage']>;
}

/** One failed model request (a `request/error` event): its step and attempt, its seq, its code and status, and whether another attempt followed. */
export interface FailedRequest {
  readonly step: number;
  readonly attempt: number;
  readonly seq: number;
  readonly code: string;
  readonly status?: number;
  readonly retried: boolean;
}

/** An incremental audit: feed it log lines one by one, then ask for the report (what `steerlog audit` prints). */
export interface Auditor {
  /** Feeds one line of the log (lines after the first invalid one are ignored). */
  push(line: string): void;
  /**
   * Feeds one non-blank line the caller has already `JSON.parse`d (and owns: a valid event is frozen in place):
   * exactly what `push` of that line does, without parsing it again.
   */
  pushValue(raw: unknown): void;
  /** The report of everything pushed so far. */
  report(): AuditReport;
}

/** Options of `createAuditor`. */
export interface AuditorOptions {
  /**
   * Receives each closed turn as it is decided instead of the report keeping it (the report's `turns` then holds
   * only the open turn), so a caller that writes the turns out keeps memory flat in the log's length.
   * @defaultValue undefined: the report keeps every turn
   */
  readonly onTurn?: (turn: AuditReport['turns'][number]) => void;
  /**
   * Receives each entered message as it is decided instead of the report keeping it (the report's `messages` is
   * then empty). @defaultValue undefined: the report keeps every message
   */
  readonly onMessage?: (message: AuditReport['messages'][number]) => void;
  /**
   * Receives every event the audit folds with the message facts it states (`stepMessageFacts`: the same session
   * fold, so the facts cost no second fold). @defaultValue undefined: no facts are computed
   */
  readonly onFacts?: (event: LogEvent, facts: readonly MessageFact[]) => void;
  /**
   * Receives every event the audit folds with the message facts it states, a turn's end as one record
   * (`stepMessageFactRecords`: `facts` without the `turn-ended` ones, which come after them as `turnEnded`), so a
   * turn of many claims makes no fact per claim. @defaultValue undefined: no facts are computed (unless `onFacts`)
   */
  readonly onFactRecords?: (event: LogEvent, facts: readonly MessageFact[], turnEnded: TurnEnded | null, claim: SpliceClaim | null) => void;
  /**
   * `true`: `onFactRecords` receives a claiming splice's `claimed` facts as one record (`claim`: they are then not
   * in `facts`), so a claim of many messages makes no fact per message (`onFacts` still receives them spelled out).
   * @defaultValue false: `claim` is always null
   */
  readonly claimRecords?: boolean;
  /**
   * Receives each child's epochs, reports and settlements as they are decided instead of the report keeping them:
   * the report's `children` then carry each child's id, mode and the epochs the sink has not had (from the first
   * still-open one on), with empty `reports` and `settlements`, so a caller that writes them out keeps memory flat
   * in the log's length (it grows with the number of children). @defaultValue undefined: the report keeps them
   */
  readonly onChildLists?: ChildListSink;
}

/**
 * A streaming audit: validates every event, folds it, and stops folding at the first invalid event, reporting the
 * state up to it. `stream` names the log when it has no session/created.
 */
export const createAuditor = (stream: string, options: AuditorOptions = {}): Auditor => {
  let state: SessionState = initialSessionState();
  let children: ChildrenState = initialChildrenState();
  // with onChildLists, a fold that hands the children's lists over replaces the one that keeps them
  const streamedChildren = options.onChildLists ? childrenStream(options.onChildLists) : null;
  let events = 0;
  let error: AuditReport['errors'][number] | null = null;
  let pendingBlank: number | null = null;
  const turns: AuditReport['turns'][number][] = [];
  const messages: AuditReport['messages'][number][] = [];
  const onTurn = options.onTurn ?? ((t: AuditReport['turns'][number]) => void turns.push(t));
  const onMessage = options.onMessage ?? ((m: AuditReport['messages'][number]) => void messages.push(m));
  const onFacts = options.onFacts;
  const onFactRecords = options.onFactRecords;
  const factOptions = options.claimRecords === true ? QUIET_CLAIMS : QUIET;
  /** The failed requests of the open turn. */
  let failedRequests: FailedRequest[] = [];
  const withFailures = (): { failedRequests?: readonly FailedRequest[] } => (failedRequests.length > 0 ? { failedRequests } : {});
  // with onFacts, the message-fact fold (which steps the same session fold) replaces the bare session fold
  let factState: MessageFactState | null = onFacts || onFactRecords ? initialMessageFactState() : null;

  /** A blank line followed by this one: the log is refused there. */
  const blankBefore = (): boolean => {
    if (pendingBlank === null) return false;
    error = { seq: pendingBlank, code: 'invalid-json', message: `seq ${pendingBlank}: blank line inside the log` };
    return true;
  };
  /** The fold's refusal of `event`: the report stops there. */
  const refuse = (event: LogEvent, e: DomainError): void => {
    error = { seq: event.seq, code: e.code, message: withSeq(event.seq, e.message) };
  };
  const fold = (parsed: E.Either<EventParseError, LogEvent>): void => {
    if (E.isLeft(parsed)) {
      const seq = parsed.left.seq ?? state.nextSeq;
      error = { seq, code: parsed.left.code, message: withSeq(seq, parsed.left.message) };
      return;
    }
    const event = parsed.right;
    let step: SessionStep;
    let facts: readonly MessageFact[] = NO_FACTS;
    let turnEnded: TurnEnded | null = null;
    let claim: SpliceClaim | null = null;
    // (no live notification, each state consumed by the next: QUIET)
    if (factState !== null) {
      const withFacts = stepMessageFactRecords(factState, event, factOptions);
      if (E.isLeft(withFacts)) return refuse(event, withFacts.left);
      factState = withFacts.right.state;
      facts = withFacts.right.facts;
      turnEnded = withFacts.right.turnEnded;
      claim = withFacts.right.claim;
      step = withFacts.right.session;
    } else {
      const stepped = stepSession(state, event, QUIET);
      if (E.isLeft(stepped)) return refuse(event, stepped.left);
      step = stepped.right;
    }
    state = step.state;
    if (streamedChildren !== null) streamedChildren.push(event);
    else children = evolveChildren(children, event);
    events++;
    // a claim's facts are a claiming splice's only ones; a turn's end comes after the event's others
    if (onFacts !== undefined) onFacts(event, claim !== null ? claimedFacts(claim) : turnEnded === null ? facts : [...facts, ...turnEndedFacts(turnEnded)]);
    onFactRecords?.(event, facts, turnEnded, claim);
    if (isKnownEvent(event) && event.type === 'request/error') {
      const { step: k, attempt, error: failure, retryInMs } = event.data;
      failedRequests.push({ step: k, attempt, seq: event.seq, code: failure.code, ...(failure.status !== undefined ? { status: failure.status } : {}), retried: retryInMs !== undefined });
    }
    if (step.messageClass) onMessage({ seq: event.seq, id: (event.data as { id: string }).id, class: step.messageClass });
    const closed = step.closedTurn;
    if (closed) {
      onTurn({ turn: closed.turn, startSeq: closed.startSeq, endSeq: closed.endSeq, reason: closed.reason?.kind ?? null, steps: closed.steps, claimed: closed.claimed, ...withFailures() });
      failedRequests = [];
    }
  };

  const childrenAndLineage = (): Pick<AuditReport, 'children' | 'lineage'> => {
    const records = streamedChildren === null ? (children.children.size > 0 ? [...children.children.values()] : null) : streamedChildren.records();
    const lineage = streamedChildren === null ? children.lineage : streamedChildren.lineage();
    return { ...(records !== null ? { children: records } : {}), ...(lineage ? { lineage } : {}) };
  };

  return {
    push(line) {
      if (error) return;
      if (line.trim() === '') {
        pendingBlank ??= state.nextSeq;
        return;
      }
      if (blankBefore()) return;
      fold(parseLogLine(line, { expectedSeq: state.nextSeq }));
    },
    pushValue(raw) {
      if (error || blankBefore()) return;
      fold(parseEvent(raw, { expectedSeq: state.nextSeq, owned: true }));
    },
    report() {
      const open = state.turns.openTurn;
      const end = state.consumed.end;
      // An empty (or blank) log is not a session: every log starts with session/created.
      const failure = error ?? (events === 0 ? { seq: 0, code: 'impossible-event' as const, message: 'seq 0: the log is empty: a session log starts with session/created' } : null);
      return {
        stream: state.created?.sessionId ?? stream,
        events,
        ok: failure === null,
        errors: failure ? [failure] : [],
        inbox: { nextTurn: nextTurnItems(state.inbox).map((m) => m.id), nextStep: nextStepItems(state.inbox).map((m) => m.id) },
        turns: open
          ? [...turns, { turn: open.turn, startSeq: open.startSeq, endSeq: null, reason: null, steps: open.steps, claimed: openTurnClaimedIds(state), ...withFailures() }]
          : [...turns],
        consumedWork: { endSeq: end?.seq ?? null, endTurn: end?.turn ?? null, droppedUnrun: state.consumed.droppedUnrun },
        messages: [...messages],
        queue: queueView(state.inbox).map((q) => ({ id: q.id, placement: q.placement })),
        ...childrenAndLineage(),
      };
    },
  };
};

const NO_FACTS: readonly MessageFact[] = Object.freeze([]);
/**
 * The session fold's options here: no live notifications (nothing in the audit reads them), and each state consumed
 * by the next (the auditor holds only its newest state, and `report()` reads only that one).
 */
const QUIET: StepSessionOptions = { notifications: false, consume: true };
/** {@link QUIET}, with a splice's claim as one record (`claimRecords`). */
const QUIET_CLAIMS: MessageFactRecordOptions = { notifications: false, consume: true, claimRecords: true };

/** A refusal's message always names its seq first: `seq 7: …` (the fold's own messages may not). */
const withSeq = (seq: number, message: string): string => {
  const named = message.replace(/^event(?= |:)/, `seq ${seq}`);
  return named.startsWith(`seq ${seq}`) ? named : `seq ${seq}: ${named}`;
};

/** Audits a whole log given as lines. */
export const auditLines = (stream: string, lines: Iterable<string>): AuditReport => {
  const auditor = createAuditor(stream);
  for (const line of lines) auditor.push(line);
  return auditor.report();
};
