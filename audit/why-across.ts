import * as E from 'fp-ts/lib/Either.js';
import type { SubagentStartData } from '../domain/children/subagent-events.js';
import { isKnownEvent, type LogEvent, type SessionCreatedData } from '../domain/events.js';
import type { InputFate } from '../domain/input-fate.js';
import type { MessageFact } from '../domain/message-facts.js';
import type { MessageSource } from '../domain/message.js';
import { parseEvent } from '../domain/parse-event.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { storeEnvelopes } from './log-sources.js';
import type { WhyCrossing, WhyOutput } from './why-output.js';

/** Answers `why` for one id in one stored session (the single-log answer). */
export type AnswerIn = (session: string, id: string) => Promise<WhyOutput>;

/** A stored session's events, parsed, up to its first invalid one (none when the stream is empty). */
const readLog = async (store: EventStore, session: string): Promise<LogEvent[]> => {
  const events: LogEvent[] = [];
  for await (const raw of storeEnvelopes(store, session)) {
    const parsed = parseEvent(raw, { expectedSeq: events.length });
    if (E.isLeft(parsed)) break;
    events.push(parsed.right);
  }
  return events;
};

/** The tool call `name` in `events` whose result names `messageId` (`{"messageId": …}`): its id and the result's seq. */
const callThatSent = (events: readonly LogEvent[], name: string, messageId: string): { callId: string; seq: number } | null => {
  const calls = new Set<string>();
  for (const e of events) {
    if (!isKnownEvent(e)) continue;
    if (e.type === 'tool/call' && e.data.name === name) calls.add(e.data.callId);
    if (e.type === 'tool/result' && calls.has(e.data.message.callId) && resultMessageId(e.data.message.content) === messageId) {
      return { callId: e.data.message.callId, seq: e.seq };
    }
  }
  return null;
};

/** The `messageId` a successful child tool's result text carries, if any. */
const resultMessageId = (content: readonly { readonly type: string }[]): string | null => {
  const text = content.map((b) => (b.type === 'text' ? (b as unknown as { text: string }).text : '')).join('');
  try {
    const v = JSON.parse(text) as { messageId?: unknown };
    return typeof v.messageId === 'string' ? v.messageId : null;
  } catch {
    return null;
  }
};

const headerOf = (events: readonly LogEvent[]): SessionCreatedData | null => (events[0]?.type === 'session/created' ? (events[0].data as SessionCreatedData) : null);
const childrenOf = (events: readonly LogEvent[]): string[] => [
  ...new Set(events.filter((e) => e.type === 'subagent/start').map((e) => (e.data as SubagentStartData).childSessionId)),
];
const admittedSource = (facts: readonly MessageFact[]): MessageSource | null => {
  const f = facts.find((x) => x.kind === 'admitted');
  return f && f.kind === 'admitted' ? f.source : null;
};
const sender = (s: MessageSource): string | null => {
  const v = (s as { senderSessionId?: unknown }).senderSessionId;
  return typeof v === 'string' ? v : null;
};

/** How a message admitted in `receiver` (a child of `parent`, or the parent of `child`) crossed, from its source. */
const viaOf = (source: MessageSource, receiverIsChild: boolean): WhyCrossing['via'] | null => {
  if (receiverIsChild) {
    if (source.kind === 'coordinator') return 'send_message';
    if (source.kind === 'user' && typeof (source as { rpcId?: unknown }).rpcId === 'string') return 'subagent.prompt';
    return null;
  }
  if (source.kind === 'subagent-report') return 'report';
  if (source.kind === 'subagent-settled') return 'settlement';
  return null;
};

/**
 * Follows the answer for `id` in `session` one hop across the session tree (reading the other session's log):
 * a `send_message` / `report` tool call → the message's admission and fate in the child / parent; a message that
 * crossed into this session → the session and tool call that sent it; an id this log does not know → the same id in
 * this session's children (its `subagent/start` edges) and in its parent. Null when nothing crossed.
 */
export const followAcross = async (store: EventStore, session: string, local: WhyOutput, answerIn: AnswerIn): Promise<WhyCrossing | null> => {
  const events = await readLog(store, session);
  const header = headerOf(events);
  const parent = header?.parentSession ?? null;
  const id = local.id;

  // a tool call of this session that sent a message to its child or parent
  const call = local.toolCall;
  if (call?.started && call.result && !call.result.isError) {
    const result = events.find((e) => e.type === 'tool/result' && isKnownEvent(e) && e.data.message.callId === id);
    const messageId = result && isKnownEvent(result) && result.type === 'tool/result' ? resultMessageId(result.data.message.content) : null;
    if (messageId !== null && (call.started.name === 'send_message' || call.started.name === 'report')) {
      const toChild = call.started.name === 'send_message';
      const target = toChild ? childArgument(events, id) : parent;
      if (target !== null) {
        const there = await answerIn(target, messageId);
        return {
          direction: toChild ? 'to-child' : 'to-parent',
          via: toChild ? 'send_message' : 'report',
          messageId,
          from: { session, callId: id, seq: call.result.seq },
          to: { session: target, facts: there.facts, fate: there.fate },
        };
      }
    }
  }

  // a message of this session that came from its parent or a child
  const source = admittedSource(local.facts);
  if (source) {
    const origin = sender(source) ?? (viaOf(source, true) === 'subagent.prompt' ? parent : null);
    if (origin === null) return null;
    const receiverIsChild = origin === parent;
    const via = viaOf(source, receiverIsChild);
    if (via === null) return null;
    const sentBy = via === 'send_message' || via === 'report' ? callThatSent(await readLog(store, origin), via, id) : null;
    return {
      direction: receiverIsChild ? 'to-child' : 'to-parent',
      via,
      messageId: id,
      from: { session: origin, callId: sentBy?.callId ?? null, seq: sentBy?.seq ?? null },
      to: { session, facts: local.facts, fate: local.fate },
    };
  }
  if (local.found !== 'none') return null;

  // an id this log does not know: sent from here into a child, or from here into the parent
  for (const child of childrenOf(events)) {
    const there = await answerIn(child, id);
    const s = admittedSource(there.facts);
    const via = s ? viaOf(s, true) : null;
    if (via === null) continue;
    if (via === 'send_message' && sender(s!) !== session) continue;
    const sentBy = via === 'send_message' ? callThatSent(events, 'send_message', id) : null;
    return { direction: 'to-child', via, messageId: id, from: { session, callId: sentBy?.callId ?? null, seq: sentBy?.seq ?? null }, to: { session: child, facts: there.facts, fate: there.fate } };
  }
  if (parent !== null) {
    const there = await answerIn(parent, id);
    const s = admittedSource(there.facts);
    const via = s && sender(s) === session ? viaOf(s, false) : null;
    if (via !== null) {
      const sentBy = via === 'report' ? callThatSent(events, 'report', id) : null;
      return { direction: 'to-parent', via, messageId: id, from: { session, callId: sentBy?.callId ?? null, seq: sentBy?.seq ?? null }, to: { session: parent, facts: there.facts, fate: there.fate } };
    }
  }
  return null;
};

/** The `subagent_id` argument of a `send_message` call, from its `tool/call` event. */
const childArgument = (events: readonly LogEvent[], callId: string): string | null => {
  for (const e of events) {
    if (isKnownEvent(e) && e.type === 'tool/call' && e.data.callId === callId) {
      try {
        const v = JSON.parse(e.data.arguments) as { subagent_id?: unknown };
        return typeof v.subagent_id === 'string' ? v.subagent_id : null;
      } catch {
        return null;
      }
    }
  }
  return null;
};
