import { recordedActor, type EventMetadata } from '../../domain/event-metadata.js';
import { byActor } from './audit-chain.js';
import * as E from 'fp-ts/lib/Either.js';
import { isKnownEvent, type LogEvent } from '../../domain/events.js';
import type { FailedRequest } from '../../domain/audit.js';
import { fateOf, initialMessageFactState, stepMessageFacts, type MessageFact, type InputFate, type MessageFactState } from '../../domain/message-facts.js';
import { parseEvent } from '../../domain/parse-event.js';
import { SessionNotFoundError, UsageError } from './cli-failure.js';
import { assertReadableFile, readingFile, readingStore, unreadNotes } from './reading-store.js';
import type { CliIo } from './io.js';
import { fileEnvelopeBatches, storeEnvelopeBatches } from '../../audit/log-sources.js';
import { parseCommandArgs } from './cli-args.js';
import { answerWhyHarness, formatHarnessSteps, synthesizedLine } from '../../audit/why-harness.js';
import { parseFormatOption, resolveFileFormat } from '../../audit/log-format.js';
import type { DshStep } from '../dsh/dsh-steps.js';
import { followAcross, type WhyCrossing } from '../../audit/why-across.js';
import { describeRun, runsNamed, type WhyRun } from '../../audit/why-runs.js';
import { evolveChildren, initialChildrenState } from '../../domain/children/child-edges.js';

import { createKeyring, openEnvelopeNow, type Keyring } from '../../runtime/content-opener.js';
import { ERASED_MARKER, type SealedContent } from '../../domain/sealed-content.js';
import { openReaderKeys } from './reader-keys.js';

export const WHY_USAGE = `usage: steerlog why <log.jsonl> <message-id | tool-call-id> [--format auto|steerlog|dsh] [--keys <spec>] [--json]
       steerlog why --store <spec> <session-id> <message-id | tool-call-id> [--keys <spec>] [--json]
  --store <spec>  jsonl:<dir> | postgres://… | esdb://… | kurrentdb://… | archive:<file>; also follows the message
                  to or from the session's parent or children
  --format <f>    how to read the file: steerlog, dsh (the harness's session log, .jsonl or .jsonl.zst), or auto
                  (the default: recognised by its first bytes); seqs of a harness log are harness seq + 1
  --keys <spec>   the data keys of encrypted content, read-only: file:<path> | postgres://… (default with --store:
                  the key store that goes with it); the answer shows the content, [erased] or [encrypted]
exit: 0 answered, 1 the log is invalid before the end (the answer covers what precedes), 2 usage, unknown store
      spec, no such session or an id the log does not know, 3 the store or file could not be read`;

/** The stored-encrypted content of the input (its admission) or of the tool call (its arguments). */
export interface WhyContent {
  /** `readable` with the keys given; `erased`: its key was destroyed (per the key store or this log); `unavailable`: no key to ask. */
  readonly state: 'readable' | 'erased' | 'unavailable';
  readonly keyId: string;
  /** The text (readable), or the marker shown instead: `[erased]`, `[encrypted]`. */
  readonly text: string;
}

/** What the log says about one tool call. */
export interface ToolCallLife {
  readonly callId: string;
  readonly requested: { readonly seq: number; readonly time: number; readonly turn: number; readonly step: number } | null;
  readonly started: { readonly seq: number; readonly time: number; readonly name: string; readonly actor: string | null } | null;
  /** `messageId`: the result message's id (a harness log gives one; null when the log has none). */
  readonly result: { readonly seq: number; readonly time: number; readonly messageId: string | null; readonly isError: boolean; readonly errorCode: string | null } | null;
  /** Context the result staged (admitted with the result as their cause). */
  readonly staged: readonly string[];
}

/** What `steerlog why --json` prints. */
export interface WhyOutput {
  readonly format: 'steerlog-why';
  readonly version: 2;
  readonly session: string;
  readonly id: string;
  /** What the id named: an input, a tool call, both (ids may collide), a child's run (or a child), or nothing in this log. */
  readonly found: 'message' | 'tool-call' | 'both' | 'run' | 'none';
  readonly facts: readonly MessageFact[];
  readonly fate: InputFate | null;
  readonly toolCall: ToolCallLife | null;
  /**
   * The hop the message made between this session and its parent or child (only with `--store`, which can read the
   * other session): a child tool call that sent it, the session that sent a message admitted here, or, for an id this
   * log does not know, the same id admitted in a child or the parent. Null when nothing crossed.
   */
  readonly crossing: WhyCrossing | null;
  /** Events read; the answer covers exactly these. */
  readonly events: number;
  /** The log's first invalid event, where reading stopped (the answer covers what comes before it). */
  readonly error: { readonly seq: number | null; readonly code: string; readonly message: string } | null;
  /** Present when the content was stored encrypted: readable, `[erased]` or `[encrypted]`. */
  readonly content?: WhyContent;
  /** A harness log only: the steps the input entered or the tool call was requested in (see {@link DshStep}). */
  readonly steps?: readonly DshStep[];
  /** Present when the id is a child's run id or a child's session id in this log: those runs, open or closed. */
  readonly runs?: readonly WhyRun[];
  /**
   * A harness log only: the closing the reader synthesized for a turn the log ends inside (the harness's crash rule,
   * docs/audit.md): its first seq and types; null when the log's last turn is closed.
   */
  readonly synthesized?: { readonly fromSeq: number; readonly types: readonly string[] } | null;
  /** Present when a model request of a step the input entered (or the tool call was requested in) failed: each failed attempt. */
  readonly failedRequests?: readonly WhyFailedRequest[];
  /** With `--json --store`: what the store left unread (a JSONL store's crash leftovers), one line each; `[]` when nothing was. */
  readonly storeNotes?: readonly string[];
}

/** One failed model request of a step (a `request/error` event), as the audit lists it, with its turn. */
export interface WhyFailedRequest extends FailedRequest {
  readonly turn: number;
}

const textOf = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) ? v.map((b: { type?: string; text?: string }) => (b?.type === 'text' ? (b.text ?? '') : `[${b?.type ?? '?'}]`)).join(' ') : '';

/** What a reader shows of one sealed unit: its stored sidecar, and the unit as opened. */
const shownContent = (stored: SealedContent, opened: { readonly sealed?: SealedContent }, text: string): WhyContent => {
  const state = opened.sealed?.state ?? 'readable';
  return { state, keyId: stored.keyId, text };
};

/**
 * Answers "what happened to `id`?" over a stream of raw envelopes, in batches (`fileEnvelopeBatches`,
 * `storeEnvelopeBatches`; `batchesOfOne` for a source of single envelopes).
 */
export const answerWhy = async (session: string | null, id: string, batches: AsyncIterable<readonly unknown[]>, keyring: Keyring = createKeyring(null)): Promise<WhyOutput> => {
  let content: WhyContent | undefined;
  const erasedKeys = new Set<string>();
  let state: MessageFactState = initialMessageFactState();
  const facts: MessageFact[] = [];
  let call: { -readonly [K in keyof ToolCallLife]: ToolCallLife[K] } = { callId: id, requested: null, started: null, result: null, staged: [] };
  let resultEventId: string | null = null;
  let error: WhyOutput['error'] = null;
  let children = initialChildrenState();
  let events = 0;
  let name = session;
  const failures: WhyFailedRequest[] = [];
  reading: for await (const batch of batches) for (const raw of batch) {
    // each raw envelope is this loop's own (freshly parsed or read): a valid event is frozen in place, not copied
    const opening = openEnvelopeNow(raw, keyring); // awaited only when a key must be looked up
    const parsed = parseEvent(opening instanceof Promise ? await opening : opening, { expectedSeq: events, owned: true });
    if (E.isLeft(parsed)) {
      error = { seq: parsed.left.seq, code: parsed.left.code, message: parsed.left.message };
      break reading;
    }
    const e: LogEvent = parsed.right;
    const step = stepMessageFacts(state, e);
    if (E.isLeft(step)) {
      error = { seq: e.seq, code: step.left.code, message: step.left.message };
      break reading;
    }
    state = step.right.state;
    children = evolveChildren(children, e);
    events++;
    for (const f of step.right.facts) if (f.id === id) facts.push(f);
    if (!isKnownEvent(e)) continue;
    if (content === undefined) content = sealedContentOf(raw, e, id);
    if (e.type === 'session/erased') for (const k of e.data.keyIds) erasedKeys.add(k);
    if (e.type === 'request/error') {
      const d = e.data;
      failures.push({ turn: d.turn, step: d.step, attempt: d.attempt, seq: e.seq, code: d.error.code, ...(d.error.status !== undefined ? { status: d.error.status } : {}), retried: d.retryInMs !== undefined });
    }
    switch (e.type) {
      case 'session/created':
        if (name === null && e.seq === 0) name = e.data.sessionId;
        break;
      case 'assistant/message':
        if (e.data.message.content.some((b) => b.type === 'tool-call' && b.callId === id)) {
          call = { ...call, requested: { seq: e.seq, time: e.time, turn: e.data.turn, step: e.data.step } };
        }
        break;
      case 'tool/call':
        if (e.data.callId === id) call = { ...call, started: { seq: e.seq, time: e.time, name: e.data.name, actor: e.metadata?.actor ?? null } };
        break;
      case 'tool/result':
        if (e.data.message.callId === id) {
          resultEventId = e.id;
          call = { ...call, result: { seq: e.seq, time: e.time, messageId: e.data.message.id ?? null, isError: e.data.message.isError === true, errorCode: e.data.error?.code ?? null } };
        }
        break;
      case 'agent/inbox/spliced':
        // staged is this answer's own array: appended in place (a copy per staging splice would grow with the staging)
        if (resultEventId !== null && e.metadata?.causationId === resultEventId) for (const m of e.data.inserted) (call.staged as string[]).push(m.id);
        break;
      default:
        break;
    }
  }
  const isMessage = facts.length > 0;
  const isCall = call.requested !== null || call.started !== null || call.result !== null;
  const runs = runsNamed(children, id);
  // attempts per step: the failed requests of the steps this input entered, or this tool call was requested in
  const steps = new Set(facts.flatMap((f) => (f.kind === 'entered' ? [`${f.turn}.${f.step}`] : [])));
  if (call.requested) steps.add(`${call.requested.turn}.${call.requested.step}`);
  const failedRequests = failures.filter((f) => steps.has(`${f.turn}.${f.step}`));
  return {
    format: 'steerlog-why',
    version: 2,
    session: name ?? 'unknown',
    id,
    found: isMessage && isCall ? 'both' : isMessage ? 'message' : isCall ? 'tool-call' : runs.length > 0 ? 'run' : 'none',
    facts,
    fate: isMessage ? fateOf(id, facts) : null,
    toolCall: isCall ? call : null,
    crossing: null,
    events,
    error,
    // a key this reader could not ask about, that the log itself records as destroyed, is erased
    ...(content ? { content: content.state === 'unavailable' && erasedKeys.has(content.keyId) ? { ...content, state: 'erased' as const, text: ERASED_MARKER } : content } : {}),
    ...(runs.length > 0 ? { runs } : {}),
    ...(failedRequests.length > 0 ? { failedRequests } : {}),
  };
};

/** The sealed content `id` names in this event (its admission, or its tool call's arguments), if sealed. */
const sealedContentOf = (raw: unknown, e: LogEvent, id: string): WhyContent | undefined => {
  const data = (raw as { data?: Record<string, unknown> }).data;
  if (e.type === 'agent/inbox/spliced') {
    const i = (e.data as { inserted: readonly { id: string }[] }).inserted.findIndex((m) => m.id === id);
    const stored = (data?.inserted as { sealed?: SealedContent }[] | undefined)?.[i]?.sealed;
    if (i < 0 || stored === undefined) return undefined;
    const opened = (e.data as { inserted: readonly { content: unknown; sealed?: SealedContent }[] }).inserted[i]!;
    return shownContent(stored, opened, textOf(opened.content));
  }
  if (e.type === 'tool/call' && (e.data as { callId: string }).callId === id) {
    const stored = data?.sealed as SealedContent | undefined;
    if (stored === undefined) return undefined;
    return shownContent(stored, e.data as { sealed?: SealedContent }, (e.data as { arguments: string }).arguments);
  }
  return undefined;
};

const iso = (t: number): string => new Date(t).toISOString();
/** Who did it: ` by alice (user)`, or ` (no actor recorded)` for an event that names none (never a guess). */
const by = (m: { readonly metadata?: EventMetadata }): string => ` ${byActor(recordedActor(m.metadata))}`;

const describeFact = (f: MessageFact): string => {
  const where = `seq ${f.seq}  ${iso(f.time)}  `;
  switch (f.kind) {
    case 'admitted':
      return `${where}admitted to ${f.target}${by(f)} (source ${f.source.kind}${f.metadata?.correlationId ? `, correlation ${f.metadata.correlationId}` : ''})`;
    case 'edited':
      return `${where}edited in place in ${f.target}${by(f)}`;
    case 'moved':
      return `${where}moved to ${f.to}${by(f)} (strict steer)`;
    case 'canceled':
      return `${where}canceled from ${f.target}${by(f)}`;
    case 'claimed':
      return `${where}claimed from ${f.target} by turn ${f.turn} for step ${f.step}, batch: ${f.batch.join(', ')}`;
    case 'entered':
      return f.inherited
        ? `${where}entered the model in turn ${f.turn} step ${f.step} of the inherited seed (the history this session was forked from)`
        : `${where}entered the model in turn ${f.turn} step ${f.step}${f.rewritten ? ', its content REWRITTEN by the pre-step' : ''}`;
    case 'dropped':
      return `${where}DROPPED by the pre-step: step ${f.step} of turn ${f.turn} ran without it`;
    case 'rejected':
      return `${where}REJECTED: turn ${f.turn} closed (${f.reason.kind}) before any step ran with it`;
    case 'turn-ended':
      return `${where}turn ${f.turn} ended: ${f.reason.kind}; consumed work: ${f.accounted ? 'this turn accounts for its input' : 'nothing ran, nothing accounted'}`;
  }
};

/** The human answer. */
export const formatWhy = (w: WhyOutput): string => {
  const out: string[] = [];
  if (w.found === 'none') out.push(`session ${w.session}: no input and no tool call ${w.id} in ${w.events} events`);
  for (const r of w.runs ?? []) out.push(`${describeRun(r)} (in session ${w.session})`);
  if (w.fate) {
    out.push(`message ${w.id} in session ${w.session}: ${w.fate.fate.toUpperCase()}${w.fate.fate === 'pending' ? (w.fate.claimed ? ' (claimed by the open turn, no step yet)' : ' at the end of the log') : ''}`);
    for (const f of w.facts) out.push(`  ${describeFact(f)}`);
  }
  for (const f of w.failedRequests ?? []) {
    out.push(`  seq ${f.seq}  turn ${f.turn} step ${f.step}: model request attempt ${f.attempt} failed: ${f.code}${f.status !== undefined ? ` (HTTP ${f.status})` : ''}, ${f.retried ? 'retried' : 'not retried'}`);
  }
  const c = w.toolCall;
  if (c) {
    out.push(`tool call ${c.callId} in session ${w.session}:`);
    if (c.requested) out.push(`  seq ${c.requested.seq}  ${iso(c.requested.time)}  requested by the model in turn ${c.requested.turn} step ${c.requested.step}`);
    if (c.started) out.push(`  seq ${c.started.seq}  ${iso(c.started.time)}  started: tool ${c.started.name}`);
    else out.push('  never started');
    if (c.result) out.push(`  seq ${c.result.seq}  ${iso(c.result.time)}  result${c.result.messageId !== null ? ` (message ${c.result.messageId})` : ''}: ${c.result.isError ? `error${c.result.errorCode ? ` ${c.result.errorCode}` : ''}` : 'ok'}`);
    else out.push('  no result in the log');
    if (c.staged.length > 0) out.push(`  staged context: ${c.staged.join(', ')}`);
  }
  const x = w.crossing;
  if (x) {
    const sentBy = x.from.callId !== null ? ` (${x.via} call ${x.from.callId}, result at seq ${x.from.seq})` : ` (${x.via})`;
    const fate = x.to.fate ? x.to.fate.fate.toUpperCase() : 'NOT FOUND';
    out.push(`message ${x.messageId} crossed ${x.direction === 'to-child' ? 'from parent' : 'from child'} ${x.from.session}${sentBy} to session ${x.to.session}: ${fate}`);
    for (const f of x.to.facts) out.push(`  ${describeFact(f)}`);
  }
  if (w.content) {
    const what = w.content.state === 'readable' ? JSON.stringify(w.content.text) : `${w.content.text} (key ${w.content.keyId} ${w.content.state === 'erased' ? 'destroyed' : 'not available here'})`;
    out.push(`  content (stored encrypted): ${what}`);
  }
  out.push(...formatHarnessSteps(w.steps ?? []));
  if (w.synthesized) out.push(synthesizedLine(w.synthesized));
  if (w.error) out.push(`the log is invalid at seq ${w.error.seq ?? '?'} [${w.error.code}]: the answer covers the ${w.events} events before it`);
  return out.join('\n') + '\n';
};

/**
 * `steerlog why`: the whole life of one input (or tool call) in a session log. Exit 0 answered, 1 when the log is
 * invalid before the end (the answer covers what precedes), 2 for a usage error or an id the log does not know,
 * 3 when the store or file cannot be read.
 */
export const whyCommand = async (argv: readonly string[], io: CliIo): Promise<number> => {
  const args = parseCommandArgs(argv, { strings: ['store', 'format', 'keys'], flags: ['json'] });
  if (!args.ok) throw new UsageError(args.error);
  const formatOption = parseFormatOption(args.strings.format);
  if (formatOption === null) throw new UsageError('--format takes auto, steerlog or dsh');
  if (args.strings.store !== undefined && formatOption === 'dsh') throw new UsageError('--format dsh reads a file, not a store');
  if (args.positionals.length !== 2) {
    throw new UsageError(args.strings.store !== undefined ? 'why --store <spec> needs a session id and a message or tool-call id' : 'why needs a log and a message or tool-call id');
  }
  const [target, id] = args.positionals as [string, string];
  const spec = args.strings.store;
  let answer: WhyOutput;
  if (spec === undefined) await assertReadableFile(target);
  const keys = await openReaderKeys(spec, args.strings.keys);
  const keyring = keys.keyring ?? createKeyring(null);
  try {
    if (spec !== undefined) {
      const storeNotes: string[] = [];
      answer = await readingStore(spec, async (store) => {
        const found = await answerWhy(target, id, storeEnvelopeBatches(store, target), keyring);
        if (found.events === 0 && !found.error) throw new SessionNotFoundError(target, spec);
        return { ...found, crossing: await followAcross(store, target, found, (s, i) => answerWhy(s, i, storeEnvelopeBatches(store, s), keyring)) };
      }, unreadNotes(io, 'why', args.flags.json ? storeNotes : undefined));
      if (args.flags.json) answer = { ...answer, storeNotes };
    } else {
      answer = await readingFile(target, async () =>
        (await resolveFileFormat(target, formatOption)) === 'dsh' ? answerWhyHarness(target, id, keyring, answerWhy) : answerWhy(null, id, fileEnvelopeBatches(target), keyring),
      );
    }
  } finally {
    await keys.close();
  }
  io.stdout.write(args.flags.json ? `${JSON.stringify(answer)}\n` : formatWhy(answer));
  if (answer.error) return 1;
  return answer.found === 'none' && answer.crossing === null ? 2 : 0;
};
