import * as E from 'fp-ts/lib/Either.js';
import type { AuditReport } from '../domain/audit.js';
import { eachActorAction, eachActorActionPart, type ActorAction, type ActorActionPartTaker } from '../domain/actor-actions.js';
import type { LogEvent } from '../domain/events.js';
import {
  fateOf,
  initialFate,
  stepFateInPlace,
  stepFatesClaimed,
  stepFatesTurnEnded,
  type InputFate,
  type MutableInputFate,
} from '../domain/input-fate.js';
import {
  initialMessageFactState,
  stepMessageFactRecords,
  type MessageFact,
  type MessageFactState,
  type SpliceClaim,
  type TurnEnded,
} from '../domain/message-facts.js';
import { parseEvent } from '../domain/parse-event.js';
import { createSessionVerifier, type SessionVerification } from '../formats/chain/verify-session.js';
import type { AuditSource, SourceError } from './audit-source.js';
import type { Keyring } from '../runtime/content-opener.js';
import { createContentTally, type AuditContent } from './audit-content.js';
import { pastLimit, type AuditLimit } from './audit-limit.js';

/** The chain part of an audit: what `verify` says about the same log. */
export type AuditChain = Pick<SessionVerification, 'status' | 'chained' | 'unchained' | 'break' | 'head'>;

/** What the audit adds to the fold's report: the chain, each input's fate, and the log's time span. */
export interface AuditExtras {
  readonly chain: AuditChain;
  readonly fates: readonly InputFate[];
  readonly times: { readonly first: number | null; readonly last: number | null };
  /** Present when the log is not steerlog's own (a harness session log): how it was read, and its refusal if any. */
  readonly source?: AuditSource;
  /** Sealed payloads and erasures (null when the log has neither). */
  readonly content: AuditContent | null;
  /**
   * Every admission and control action, in log order, with its actor (`actorActionsOf`); empty when the audit handed
   * them to an {@link ActionSink} as it decided them instead.
   */
  readonly actions: readonly ActorAction[];
  /** What the store left unread (a JSONL store's crash leftovers), one line each: present when read from a store. */
  readonly storeNotes?: readonly string[];
}

/**
 * Takes the audit's actions as it decides them, in log order, instead of the extras keeping them (`AuditExtras.actions`
 * is then empty), so a caller that writes them out keeps memory flat in the log's length: a log's actions grow with
 * its admissions and cancels, not with what is pending.
 */
export interface ActionSink {
  /** The next action, in log order. */
  push(action: ActorAction): void;
  /**
   * When present, takes the actions instead of `push`, each as its parts (`eachActorActionPart`: the action
   * `actorActionsOf` builds from them), so a sink that writes them out needs no object per action.
   * @defaultValue undefined: every action goes to `push`
   */
  readonly pushPart?: ActorActionPartTaker;
  /**
   * Forgets every action pushed so far: the audit reads the log a second time for its extras (a line the two
   * readers split differently) and pushes that pass's actions from the start.
   */
  restart(): void;
}

/**
 * What the extras collect besides the fold: the chain check of every raw envelope (until its first broken link), and
 * each folded event's time and message facts (the facts stepped into each input's fate, not kept).
 */
export interface ExtrasCollector {
  /** One raw envelope (parsed JSON, or the line itself when it is not JSON) into the chain check. */
  verify(raw: unknown): void;
  /** One folded event and the message facts it states. */
  facts(event: LogEvent, facts: readonly MessageFact[]): void;
  /**
   * One folded event and the message facts it states, a turn's end as one record (`stepMessageFactRecords`: its
   * `turn-ended` facts, after `facts`): the same as {@link ExtrasCollector.facts} of all of them, without a fact
   * per claim of the turn; `claim`, when given (`claimRecords`), a splice's `claimed` facts as one record (the
   * event's only facts), without a fact per claimed message.
   */
  factRecords(event: LogEvent, facts: readonly MessageFact[], turnEnded: TurnEnded | null, claim?: SpliceClaim | null): void;
  /** The extras, once every envelope is in (asks the keyring about the keys the log sealed with). */
  result(): Promise<AuditExtras>;
}

/**
 * A fresh collector; `stream` names the chain (null: the first session/created's sessionId); `keyring` (null: none)
 * says which sealed payloads are readable, erased or unavailable. `chain`, when given, is the same log's chain
 * verification computed elsewhere (a worker thread reading the same lines): the collector then checks no link
 * itself and reports that one (`onEvent` is then called once per envelope instead of once per verified event).
 * `actionSink`, when given, takes each action instead of the result's `actions`.
 */
export const createExtrasCollector = (
  stream: string | null,
  onEvent?: () => void,
  keyring: Keyring | null = null,
  chain?: Promise<SessionVerification>,
  actionSink?: ActionSink,
): ExtrasCollector => {
  // no verifier of its own when the chain is checked elsewhere
  const verifier = chain === undefined ? createSessionVerifier(stream, onEvent ? { onEvent } : {}) : null;
  const content = createContentTally(keyring);
  let verifying = true;
  // each input's fate, stepped as its facts come (its facts are not kept), in a record of its own written in place
  // (no fate object per fact); `result()` hands out copies
  const fates = new Map<string, MutableInputFate>();
  const actions: ActorAction[] = [];
  const pushAction = actionSink === undefined ? (a: ActorAction): void => void actions.push(a) : (a: ActorAction): void => actionSink.push(a);
  // a sink that takes the actions' parts: no action object made for it
  const pushPart: ActorActionPartTaker | undefined = actionSink?.pushPart === undefined ? undefined : (e, kind, id, turn) => actionSink.pushPart!(e, kind, id, turn);
  let seedLength: number | undefined;
  let first: number | null = null;
  let last: number | null = null;
  /** An input's fate record: a record of its own (`initialFate` builds a new one), stepped in place from then on. */
  const fateRecord = (id: string): MutableInputFate => {
    let fate = fates.get(id);
    if (fate === undefined) fates.set(id, (fate = initialFate(id)));
    return fate;
  };
  const factRecords = (event: LogEvent, facts: readonly MessageFact[], turnEnded: TurnEnded | null, claim: SpliceClaim | null = null): void => {
    first ??= event.time;
    last = event.time;
    for (let i = 0; i < facts.length; i++) {
      const f = facts[i]!;
      // the collector owns its fate records and hands out copies only in result(), after the last fact
      stepFateInPlace(fateRecord(f.id), f, true);
    }
    // a splice's claim (no action is taken from its facts); a turn's `turn-ended` facts come after the event's others
    // (no action is taken from them either)
    if (claim !== null) stepFatesClaimed(claim, fateRecord);
    if (turnEnded !== null) stepFatesTurnEnded(turnEnded, fateRecord);
    if (event.seq === 0 && event.type === 'session/created') seedLength = (event.data as { seedLength?: number }).seedLength;
    if (pushPart !== undefined) eachActorActionPart(event, facts, seedLength, pushPart);
    else eachActorAction(event, facts, seedLength, pushAction);
  };
  return {
    verify(raw) {
      if (verifier === null) onEvent?.();
      else if (verifying) verifying = verifier.push(raw);
      content.push(raw);
    },
    facts(event, facts) {
      factRecords(event, facts, null);
    },
    factRecords,
    async result() {
      const v = verifier === null ? await chain! : verifier.result();
      return {
        chain: { status: v.status, chained: v.chained, unchained: v.unchained, break: v.break, head: v.head },
        fates: [...fates.values()].map((f): InputFate => ({ ...f })),
        times: { first, last },
        content: await content.result(),
        actions,
      };
    },
  };
};

/**
 * One streaming pass over raw envelopes: chain check, message facts (up to the first invalid event), times.
 * `actionSink`, when given, is restarted and takes the pass's actions instead of the result's `actions`.
 */
export const auditExtras = async (
  stream: string | null,
  raws: AsyncIterable<unknown>,
  limit?: AuditLimit,
  onEvent?: () => void,
  keyring: Keyring | null = null,
  actionSink?: ActionSink,
): Promise<AuditExtras> => {
  actionSink?.restart();
  const collector = createExtrasCollector(stream, onEvent, keyring, undefined, actionSink);
  let state: MessageFactState = initialMessageFactState();
  let folding = true;
  for await (const raw of raws) {
    if (pastLimit(raw, limit)) break;
    collector.verify(raw);
    if (!folding) continue;
    const parsed = parseEvent(raw, { expectedSeq: state.session.nextSeq });
    if (E.isLeft(parsed)) {
      folding = false;
      continue;
    }
    const step = stepMessageFactRecords(state, parsed.right, CLAIM_RECORDS);
    if (E.isLeft(step)) {
      folding = false;
      continue;
    }
    state = step.right.state;
    collector.factRecords(parsed.right, step.right.facts, step.right.turnEnded, step.right.claim);
  }
  return await collector.result();
};

/** The fold's options here: a splice's claim as one record, stepped into the fates without a fact per message. */
const CLAIM_RECORDS = { claimRecords: true } as const;

/** An audit message with its fate (entered ones keep their class; inputs that never entered have class null). */
export type AuditMessage = Omit<AuditReport['messages'][number], 'class'> & { readonly class: AuditReport['messages'][number]['class'] | null; readonly fate: InputFate };

/** What `steerlog audit --json` prints. */
export type AuditOutput = Omit<AuditReport, 'messages' | 'errors'> & {
  /** The fold's first refusal (or the harness reader's), then (when the chain is broken or unreadable) the first broken link. */
  readonly errors: readonly (AuditReport['errors'][number] | SourceError | { readonly seq: number; readonly code: 'chain-broken'; readonly message: string })[];
  readonly format: 'steerlog-audit';
  readonly version: 1;
  /** The `--at` limit applied, or null for the whole log. */
  readonly at: AuditLimit | null;
  readonly times: AuditExtras['times'];
  /** Every input admitted: entered ones first in entry order (seq of their user/message), then the rest by admission seq. */
  readonly messages: readonly AuditMessage[];
  readonly chain: AuditChain;
  /** Present when the log is not steerlog's own: `source.format` says which format it was read as. */
  readonly source?: AuditSource;
  /** Present when the log holds encrypted payloads or erasures: what is readable, what was erased, by whom, when. */
  readonly content?: AuditContent;
  /** Every admission and control action, in log order, with its actor (null when the event names none). */
  readonly actions: readonly ActorAction[];
  /** What the store left unread (a JSONL store's crash leftovers), one line each: present when read from a store. */
  readonly storeNotes?: readonly string[];
};

/** Each input's fate by its id (what {@link enteredMessage} looks a message up in). */
export const fatesById = (extras: AuditExtras): ReadonlyMap<string, InputFate> => new Map(extras.fates.map((f) => [f.id, f]));

/** An entered message of the fold's report with its fate (a message the facts never saw has an empty one). */
export const enteredMessage = (m: AuditReport['messages'][number], fates: ReadonlyMap<string, InputFate>): AuditMessage => ({ ...m, fate: fates.get(m.id) ?? fateOf(m.id, []) });

/** The inputs that never entered the model (not among `entered`), by admission seq, after the entered ones. */
export const otherInputs = (extras: AuditExtras, entered: ReadonlySet<string>): AuditMessage[] =>
  extras.fates
    .filter((f) => !entered.has(f.id))
    .map((f) => ({ seq: f.admitted?.seq ?? f.claimed?.seq ?? 0, id: f.id, class: null, fate: f }))
    .sort((a, b) => a.seq - b.seq);

/** Joins the fold's report and the extras into the audit output. */
export const auditOutput = (report: AuditReport, extras: AuditExtras, at: AuditLimit | null): AuditOutput => {
  const fates = fatesById(extras);
  const entered = report.messages.map((m) => enteredMessage(m, fates));
  const others = otherInputs(extras, new Set(report.messages.map((m) => m.id)));
  const { messages: _m, ...rest } = report;
  const brk = extras.chain.break;
  // a log the fold already refused says why in its own error; a schema-valid log with a broken chain gets this one
  const chainError = report.ok && brk && (extras.chain.status === 'broken' || extras.chain.status === 'unreadable')
    ? [{ seq: brk.seq, code: 'chain-broken' as const, message: `seq ${brk.seq}: the hash chain is broken here (${brk.kind})` }]
    : [];
  const sourceError = extras.source?.error ? [extras.source.error] : [];
  return {
    format: 'steerlog-audit',
    version: 1,
    ...rest,
    ok: rest.ok && chainError.length === 0 && sourceError.length === 0,
    errors: [...report.errors, ...sourceError, ...chainError],
    at,
    times: extras.times,
    messages: [...entered, ...others],
    chain: extras.chain,
    actions: extras.actions,
    ...(extras.source ? { source: extras.source } : {}),
    ...(extras.content ? { content: extras.content } : {}),
    ...(extras.storeNotes ? { storeNotes: extras.storeNotes } : {}),
  };
};
