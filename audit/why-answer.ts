import * as E from 'fp-ts/lib/Either.js';
import { evolveChildren, initialChildrenState } from '../domain/children/child-edges.js';
import { isKnownEvent, type LogEvent } from '../domain/events.js';
import { fateOf } from '../domain/input-fate.js';
import {
  initialMessageFactState,
  stepMessageFactRecords,
  turnEndedFacts,
  type MessageFact,
  type MessageFactState,
} from '../domain/message-facts.js';
import { parseEvent } from '../domain/parse-event.js';
import { ERASED_MARKER, type SealedContent } from '../domain/sealed-content.js';
import { createKeyring, openEnvelopeNow, type Keyring } from '../runtime/content-opener.js';
import { runsNamed } from './why-runs.js';
import type { ToolCallLife, WhyContent, WhyFailedRequest, WhyOutput } from './why-output.js';

/** The single-log answer of `why`: one pass over a session's envelopes (audit/why.ts reads them from a file or a store). */

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
    const step = stepMessageFactRecords(state, e);
    if (E.isLeft(step)) {
      error = { seq: e.seq, code: step.left.code, message: step.left.message };
      break reading;
    }
    state = step.right.state;
    children = evolveChildren(children, e);
    events++;
    for (const f of step.right.facts) if (f.id === id) facts.push(f);
    // a turn's end: only its `turn-ended` facts about this id are made
    if (step.right.turnEnded !== null) for (const f of turnEndedFacts(step.right.turnEnded, id)) facts.push(f);
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
