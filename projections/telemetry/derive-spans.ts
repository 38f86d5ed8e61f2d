import * as E from 'fp-ts/lib/Either.js';
import type { DomainError } from '../../domain/errors.js';
import { recordedActor } from '../../domain/event-metadata.js';
import {
  isKnownEvent,
  type AssistantMessageData,
  type InboxSplicedData,
  type LogEvent,
  type RequestErrorData,
  type SessionCreatedData,
  type ToolCallData,
  type ToolResultData,
  type TurnEndData,
} from '../../domain/events.js';
import type { SubagentEndData, SubagentStartData } from '../../domain/children/subagent-events.js';
import type { UserMessage } from '../../domain/message.js';
import { initialMessageFactState, stepMessageFacts, type MessageFact, type MessageFactState } from '../../domain/message-facts.js';
import { createInboxTracker } from './inbox-tracker.js';
import { spanIdOf, spanIdsOf, traceIdOf } from './span-ids.js';
import type { ContentRedaction, DerivedSpan, DerivedSpanEvent, DerivedSpanKind, DerivedSpanLink, DerivedSpanStatus, SpanAttributes, SpanAttributeValue } from './span-types.js';

/**
 * Telemetry as a projection of the log: one event at a time in, the spans it completes out. The same derivation
 * serves a live session (spans leave as the events commit) and a stored one (`steerlog trace`), and because every
 * id is a function of the session id and seqs, both give the same spans.
 *
 * What becomes a span:
 * - a turn (`turn/start` … `turn/end`) → `invoke_agent` (a root span);
 * - each model request of a step → `chat {model}`, a child of its turn: from the step's last event before the
 *   request (`step/start`, the step's last `user/message`, or the previous attempt's `request/error`: a retry's
 *   span includes its back-off wait) to the `assistant/message` or `request/error` that ends it;
 * - each tool call of a step → `execute_tool {tool}`, a child of its turn: from `tool/call` to `tool/result`;
 * - each epoch of a child session (`subagent/start` … `subagent/end`) → `invoke_agent {child}`, a child of the
 *   tool call that was running when it started (else of the turn), linked to the child session's trace;
 * - inbox activity (admitted, claimed, canceled, edited, moved) → span events on the open turn's span; between
 *   turns, on a `steerlog.idle` span from the first such activity to the next `turn/start`.
 * Events inside a fork's inherited seed are the parent's history: they give no span.
 *
 * What the derivation reads of each event, by its type, is stated in `span-source.ts` (the live export's worker is
 * handed those fields only): a change here that reads another field of an event changes that table too.
 */

/** Options of {@link createSpanDeriver}. */
export interface SpanDeriverOptions {
  /**
   * The session id, when the caller knows it before `session/created` (a log read from the middle). @defaultValue the
   * `sessionId` of the log's `session/created`
   */
  readonly sessionId?: string;
  /**
   * The redaction hook that decides what content (message text, tool arguments and results) is exported; content
   * whose event is sealed or erased never reaches it. @defaultValue none: no content is exported
   */
  readonly content?: ContentRedaction;
  /**
   * Told each inbox span event as its log event is derived (the span that carries it completes later: at the end of
   * its turn or idle stretch); the metrics read admissions and claims here. @defaultValue none
   */
  readonly onInboxEvent?: (event: DerivedSpanEvent) => void;
  /**
   * Fold each event through the session fold, refusing an invalid log. `false` trusts the log (a live runtime's own
   * events, validated when they were appended) and keeps only the pending lists, for the same spans at a fraction of
   * the cost; an invalid log then gives spans without a refusal. @defaultValue true
   */
  readonly validate?: boolean;
}

/** The incremental derivation: feed it the log's events in order. */
export interface SpanDeriver {
  /** One event in: the spans it completes (children before their parent), or the session fold's refusal. */
  readonly push: (event: LogEvent) => E.Either<DomainError, readonly DerivedSpan[]>;
  /**
   * The spans still open (a turn without its `turn/end`, a tool still running, inbox activity since the last
   * turn), closed at the time of the last event and marked `steerlog.span.open: true`. Does not change the deriver.
   */
  readonly openSpans: () => readonly DerivedSpan[];
  /** The session id the spans carry (null before it is known). */
  readonly sessionId: () => string | null;
}

interface Opened {
  readonly seq: number;
  readonly time: number;
}

interface ToolSpan {
  readonly callId: string;
  name: string;
  /** Its id; '' until needed for a call the answer requested ({@link ToolSpan.answerSeq} keys it then). */
  spanId: string;
  /** The seq of the answer that requested it. */
  readonly answerSeq: number;
  /** The `tool/call` that opened it, or null while the answer only requested it. */
  opened: Opened | null;
  arguments: string | null;
}

interface StepState {
  readonly step: number;
  readonly opened: Opened;
  /** Where the next model request starts: the step's last event before it. */
  requestFrom: Opened;
  attempt: number;
  /** Did the model answer? */
  answered: boolean;
  /** Is a model request of the step still to be closed (none closed yet, or a failure announced a retry)? */
  requestPending: boolean;
  /** The step's user messages, for content capture. */
  readonly inputs: { readonly seq: number; readonly message: UserMessage }[];
  /** Tool calls of the step, by call id, in the order the log names them. */
  readonly tools: Map<string, ToolSpan>;
  /** The most recently opened tool span still running (the parent of a child session started now). */
  lastRunningTool: ToolSpan | null;
}

interface TurnState {
  readonly turn: number;
  readonly opened: Opened;
  readonly spanId: string;
  readonly events: DerivedSpanEvent[];
  step: StepState | null;
  steps: number;
}

interface ChildRun {
  readonly data: SubagentStartData;
  readonly opened: Opened;
  readonly spanId: string;
  readonly parentSpanId: string | null;
}

interface IdleState {
  readonly opened: Opened;
  readonly spanId: string;
  readonly events: DerivedSpanEvent[];
}

type Attributes = Record<string, SpanAttributeValue>;

const NO_SPANS: readonly DerivedSpan[] = Object.freeze([]);
/** The answer of most events (they complete no span), allocated once. */
const NONE_COMPLETED: E.Either<DomainError, readonly DerivedSpan[]> = Object.freeze(E.right(NO_SPANS));
const NO_LINKS: readonly DerivedSpanLink[] = Object.freeze([]);
const NO_EVENTS: readonly DerivedSpanEvent[] = Object.freeze([]);
const UNSET: DerivedSpanStatus = Object.freeze({ code: 'unset' });

/** The most tool span names a deriver keeps (it starts over beyond). */
const MAX_TOOL_NAMES = 256;

/** The span event's name of each inbox fact it is made of (one string each, not one per event). */
const INBOX_EVENT_NAMES = {
  admitted: 'steerlog.inbox.admitted',
  claimed: 'steerlog.inbox.claimed',
  canceled: 'steerlog.inbox.canceled',
  edited: 'steerlog.inbox.edited',
  moved: 'steerlog.inbox.moved',
} as const;

/** How an inbox message shows, by the list it is in and its source: the queue's placement, named as history classes. */
const classOf = (target: string, message: UserMessage): string => (target === 'next-turn' ? 'prompt' : message.source.kind === 'user' ? 'steering' : 'context');

/** The plain text of content blocks (images are named, never inlined). */
const textOf = (blocks: readonly { readonly type: string; readonly text?: string; readonly mediaType?: string }[]): string =>
  blocks.map((b) => (b.type === 'text' || b.type === 'reasoning' ? (b.text ?? '') : b.type === 'image' ? `[image ${b.mediaType ?? ''}]` : '')).join('');

/** Creates the incremental span derivation of one session. Each event costs O(1) amortized (plus its own size). */
export const createSpanDeriver = (options: SpanDeriverOptions = {}): SpanDeriver => {
  let facts: MessageFactState = initialMessageFactState();
  let sessionId: string | null = options.sessionId ?? null;
  let traceId: string | null = sessionId === null ? null : traceIdOf(sessionId);
  let seedLength: number | undefined;
  let last: Opened | null = null;
  let turn: TurnState | null = null;
  let idle: IdleState | null = null;
  const children = new Map<string, ChildRun>();
  /** The class of each pending message, by id (set when it enters a list, dropped when it leaves). */
  const pendingClass = new Map<string, string>();
  const contentHook = options.content;
  const tracker = options.validate === false ? createInboxTracker() : null;

  const sid = (): string => sessionId ?? '';
  const tid = (): string => traceId ?? traceIdOf('');
  /** The span ids of the session (the hash of its key prefix computed once per session id). */
  let ids: { readonly of: string; readonly id: (what: string, seq: number) => string } | null = null;
  const idOf = (what: string, seq: number): string => {
    const s = sid();
    if (ids === null || ids.of !== s) ids = { of: s, id: spanIdsOf(s) };
    return ids.id(what, seq);
  };

  const span = (
    name: string,
    kind: DerivedSpanKind,
    spanId: string,
    parentSpanId: string | null,
    opened: Opened,
    closed: Opened,
    attributes: Attributes,
    events: readonly DerivedSpanEvent[],
    status: DerivedSpanStatus,
    links: readonly DerivedSpanLink[] = NO_LINKS,
    open = false,
  ): DerivedSpan => {
    attributes['steerlog.session.id'] = sid();
    attributes['steerlog.seq.first'] = opened.seq;
    attributes['steerlog.seq.last'] = closed.seq;
    if (open) attributes['steerlog.span.open'] = true;
    return {
      traceId: tid(),
      spanId,
      parentSpanId,
      name,
      kind,
      startTime: opened.time,
      endTime: Math.max(opened.time, closed.time),
      attributes,
      events,
      links,
      status,
    };
  };

  /** Content for `field`, through the hook; never for a sealed event, never without a hook. */
  const content = (kind: 'input' | 'output' | 'tool-arguments' | 'tool-result', text: string, seq: number, sealed: unknown): string | null => {
    if (contentHook === undefined || sealed !== undefined) return null;
    return contentHook({ kind, text, sessionId: sid(), seq });
  };

  // ---- spans -------------------------------------------------------------------------------------------------
  /** The last model's span name, and each tool's (a few per session): one string each, not one per span. */
  let lastModel: string | null = null;
  let lastChatName = 'chat';
  const toolNames = new Map<string, string>();
  const chatName = (model: string): string => {
    if (model !== lastModel) {
      lastModel = model;
      lastChatName = `chat ${model}`;
    }
    return lastChatName;
  };
  const toolName = (tool: string): string => {
    let name = toolNames.get(tool);
    if (name === undefined) {
      if (toolNames.size >= MAX_TOOL_NAMES) toolNames.clear();
      name = `execute_tool ${tool}`;
      toolNames.set(tool, name);
    }
    return name;
  };

  const chatSpan = (t: TurnState, s: StepState, closed: Opened, answer: { readonly data: AssistantMessageData } | null, failure: RequestErrorData | null, open = false): DerivedSpan => {
    const model = answer?.data.message.source;
    const attributes: Attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.conversation.id': sid() };
    if (model) {
      attributes['gen_ai.provider.name'] = model.provider;
      attributes['gen_ai.request.model'] = model.model;
    }
    const usage = answer?.data.usage;
    if (usage) {
      attributes['gen_ai.usage.input_tokens'] = usage.inputTokens;
      attributes['gen_ai.usage.output_tokens'] = usage.outputTokens;
      if (usage.cachedInputTokens !== undefined) attributes['steerlog.usage.cached_input_tokens'] = usage.cachedInputTokens;
    }
    let status = UNSET;
    if (answer) {
      // an answer cut at its token limit says so (and is logged without its tool calls); one that asks for tools shows it
      if (answer.data.finishReason === 'max-tokens') attributes['gen_ai.response.finish_reasons'] = ['length'];
      else if (answer.data.message.content.some((b) => b.type === 'tool-call')) attributes['gen_ai.response.finish_reasons'] = ['tool_calls'];
      if (answer.data.interrupted) {
        attributes['error.type'] = 'interrupted';
        status = { code: 'error', message: 'the answer was interrupted' };
      }
      if (answer.data.message.id !== undefined) attributes['gen_ai.response.id'] = answer.data.message.id;
    } else if (failure) {
      attributes['error.type'] = failure.error.code;
      if (failure.error.status !== undefined) attributes['steerlog.error.status'] = failure.error.status;
      if (failure.retryInMs !== undefined) attributes['steerlog.retry_in_ms'] = failure.retryInMs;
      status = { code: 'error', message: failure.error.code };
    } else if (!open) {
      attributes['error.type'] = 'no-answer';
      status = { code: 'error', message: 'the step ended without an answer' };
    }
    attributes['steerlog.turn'] = t.turn;
    attributes['steerlog.step'] = s.step;
    attributes['steerlog.attempt'] = s.attempt;
    if (answer && contentHook !== undefined) {
      const inputs = s.inputs.map((i) => content('input', textOf(i.message.content), i.seq, i.message.sealed));
      if (inputs.length > 0 && inputs.every((i) => i !== null)) attributes['gen_ai.input.messages'] = JSON.stringify(inputs.map((text) => ({ role: 'user', parts: [{ type: 'text', content: text }] })));
      const output = content('output', textOf(answer.data.message.content as never), closed.seq, answer.data.sealed);
      if (output !== null) attributes['gen_ai.output.messages'] = JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: output }] }]);
    }
    const name = model ? chatName(model.model) : 'chat';
    return span(name, 'client', idOf('chat', s.requestFrom.seq), t.spanId, s.requestFrom, closed, attributes, NO_EVENTS, status, NO_LINKS, open);
  };

  const toolSpan = (t: TurnState, s: StepState, tool: ToolSpan, closed: Opened, result: { readonly data: ToolResultData } | null, open = false): DerivedSpan => {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.name,
      'gen_ai.tool.call.id': tool.callId,
      'steerlog.turn': t.turn,
      'steerlog.step': s.step,
    };
    let status = UNSET;
    if (tool.opened === null) attributes['steerlog.tool.dispatched'] = false;
    if (result) {
      const d = result.data;
      if (d.error) {
        attributes['error.type'] = d.error.code;
        status = { code: 'error', message: d.error.code };
      } else if (d.message.isError) {
        attributes['error.type'] = 'tool-error';
        status = { code: 'error', message: 'tool-error' };
      }
      const meta = d.meta;
      if (meta && meta.withheld !== undefined) {
        attributes['steerlog.tool.withheld'] = true;
        attributes['steerlog.tool.late'] = true;
      } else if (meta && meta.settledAfterAbort === true) attributes['steerlog.tool.late'] = true;
      if (contentHook !== undefined) {
        // the text is made only for a hook (no content leaves without one)
        const args = tool.arguments === null ? null : content('tool-arguments', tool.arguments, tool.opened?.seq ?? closed.seq, undefined);
        if (args !== null) attributes['steerlog.tool.arguments'] = args;
        const out = content('tool-result', textOf(d.message.content), closed.seq, d.sealed);
        if (out !== null) attributes['steerlog.tool.result'] = out;
      }
    } else if (!open) {
      attributes['error.type'] = 'no-result';
      status = { code: 'error', message: 'the step ended without a result' };
    }
    if (tool.spanId === '') tool.spanId = idOf(`tool:${tool.callId}`, tool.answerSeq);
    return span(toolName(tool.name), 'internal', tool.spanId, t.spanId, tool.opened ?? closed, closed, attributes, NO_EVENTS, status, NO_LINKS, open);
  };

  const turnSpan = (t: TurnState, closed: Opened, end: TurnEndData | null, hash: string | undefined, open = false): DerivedSpan => {
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': sid(), 'steerlog.turn': t.turn, 'steerlog.turn.steps': t.steps };
    let status = UNSET;
    if (end) {
      const reason = end.reason;
      attributes['steerlog.turn.end_reason'] = reason.kind;
      if (reason.kind === 'error') {
        attributes['error.type'] = reason.error.code;
        status = { code: 'error', message: reason.error.code };
      } else if (reason.kind === 'aborted') attributes['steerlog.turn.abort_cause'] = reason.reason.kind;
    }
    if (hash !== undefined) attributes['steerlog.chain.head'] = hash;
    return span('invoke_agent', 'internal', t.spanId, null, t.opened, closed, attributes, t.events, status, NO_LINKS, open);
  };

  const childSpan = (run: ChildRun, closed: Opened, end: SubagentEndData | null, open = false): DerivedSpan => {
    const d = run.data;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': d.childSessionId,
      'steerlog.child.session.id': d.childSessionId,
      'steerlog.child.run.id': d.runId,
      'steerlog.child.mode': d.mode,
      'steerlog.child.epoch': d.epoch,
    };
    let status = UNSET;
    if (end) {
      attributes['steerlog.child.stop_reason'] = end.stopReason;
      if (end.stopReason === 'failed' || end.stopReason === 'abnormal') status = { code: 'error', message: end.stopReason };
    }
    const link: DerivedSpanLink = { traceId: traceIdOf(d.childSessionId), spanId: spanIdOf(d.childSessionId, 'session', 0), attributes: { 'steerlog.link': 'child-session' } };
    return span(`invoke_agent ${d.childSessionId}`, 'internal', run.spanId, run.parentSpanId, run.opened, closed, attributes, NO_EVENTS, status, [link], open);
  };

  const idleSpan = (i: IdleState, closed: Opened, open = false): DerivedSpan =>
    span('steerlog.idle', 'internal', i.spanId, null, i.opened, closed, {}, i.events, UNSET, NO_LINKS, open);

  // ---- inbox activity ------------------------------------------------------------------------------------------
  const inboxEvents = (event: LogEvent, list: readonly MessageFact[]): DerivedSpanEvent[] => {
    const out: DerivedSpanEvent[] = [];
    const actor = recordedActor(event.metadata);
    for (const f of list) {
      if (f.kind !== 'admitted' && f.kind !== 'claimed' && f.kind !== 'canceled' && f.kind !== 'edited' && f.kind !== 'moved') continue;
      const attributes: Attributes = { 'steerlog.message.id': f.id, 'steerlog.seq': event.seq };
      const cls = pendingClass.get(f.id);
      if (cls !== undefined) attributes['steerlog.message.class'] = cls;
      attributes['steerlog.inbox.list'] = f.kind === 'moved' ? f.to : f.target;
      if (actor.actor !== null) attributes['steerlog.actor'] = actor.actor;
      if (actor.actorKind !== null) attributes['steerlog.actor.kind'] = actor.actorKind;
      if (f.kind === 'claimed') attributes['steerlog.turn'] = f.turn;
      out.push({ name: INBOX_EVENT_NAMES[f.kind], time: event.time, attributes });
    }
    return out;
  };

  /** Forgets the class of the messages a splice took out of the lists (a re-inserted id is edited, not canceled). */
  const forgetClaimed = (list: readonly MessageFact[]): void => {
    for (const f of list) if (f.kind === 'claimed' || f.kind === 'canceled') pendingClass.delete(f.id);
  };

  // ---- the fold ------------------------------------------------------------------------------------------------
  const push = (event: LogEvent): E.Either<DomainError, readonly DerivedSpan[]> => {
    let inboxFacts: readonly MessageFact[];
    if (tracker !== null) inboxFacts = tracker.step(event);
    else {
      const stepped = stepMessageFacts(facts, event);
      if (E.isLeft(stepped)) return stepped;
      facts = stepped.right.state;
      inboxFacts = stepped.right.facts;
    }
    const at: Opened = { seq: event.seq, time: event.time };
    last = at;
    if (event.seq === 0 && event.type === 'session/created') {
      const d = event.data as SessionCreatedData;
      seedLength = d.seedLength;
      if (sessionId === null) {
        sessionId = d.sessionId;
        traceId = traceIdOf(d.sessionId);
      }
      return NONE_COMPLETED;
    }
    if (seedLength !== undefined && event.seq >= 1 && event.seq <= seedLength + 1) return NONE_COMPLETED;
    if (!isKnownEvent(event)) return NONE_COMPLETED;
    // the spans this event completes: most events complete none, and get no array
    let out: DerivedSpan[] | null = null;
    switch (event.type) {
      case 'agent/inbox/spliced': {
        const list = inboxFacts;
        for (const m of event.data.inserted) pendingClass.set(m.id, classOf(event.data.target, m));
        const evs = inboxEvents(event, list);
        forgetClaimed(list);
        if (options.onInboxEvent) for (const ev of evs) options.onInboxEvent(ev);
        if (evs.length === 0) break;
        if (turn !== null) turn.events.push(...evs);
        else {
          idle ??= { opened: at, spanId: idOf('idle', event.seq), events: [] };
          idle.events.push(...evs);
        }
        break;
      }
      case 'turn/start': {
        if (idle !== null) {
          (out ??= []).push(idleSpan(idle, at));
          idle = null;
        }
        turn = { turn: event.data.turn, opened: at, spanId: idOf('turn', event.seq), events: [], step: null, steps: 0 };
        break;
      }
      case 'step/start': {
        if (turn === null) break;
        turn.steps++;
        turn.step = { step: event.data.step, opened: at, requestFrom: at, attempt: 1, answered: false, requestPending: true, inputs: [], tools: new Map(), lastRunningTool: null };
        break;
      }
      case 'user/message': {
        const s = turn?.step;
        if (s && !s.answered && s.attempt === 1) {
          s.requestFrom = at;
          if (contentHook !== undefined) s.inputs.push({ seq: event.seq, message: event.data });
        }
        break;
      }
      case 'request/error': {
        const s = turn?.step;
        if (!turn || !s) break;
        (out ??= []).push(chatSpan(turn, s, at, null, event.data));
        s.attempt = event.data.attempt + 1;
        s.requestFrom = at;
        s.requestPending = event.data.retryInMs !== undefined;
        break;
      }
      case 'assistant/message': {
        const s = turn?.step;
        if (!turn || !s) break;
        (out ??= []).push(chatSpan(turn, s, at, { data: event.data }, null));
        s.answered = true;
        s.requestPending = false;
        for (const b of event.data.message.content) {
          if (b.type !== 'tool-call' || s.tools.has(b.callId)) continue;
          // keyed on the answer and the call id until its tool/call (if any) opens it
          s.tools.set(b.callId, { callId: b.callId, name: b.name, spanId: '', answerSeq: event.seq, opened: null, arguments: b.arguments });
        }
        break;
      }
      case 'tool/call': {
        const s = turn?.step;
        if (!turn || !s) break;
        const d: ToolCallData = event.data;
        const known = s.tools.get(d.callId);
        const tool: ToolSpan = known ?? { callId: d.callId, name: d.name, spanId: '', answerSeq: event.seq, opened: null, arguments: null };
        tool.name = d.name;
        tool.opened = at;
        tool.arguments = d.sealed === undefined ? d.arguments : null;
        tool.spanId = idOf('tool', event.seq);
        s.tools.set(d.callId, tool);
        s.lastRunningTool = tool;
        break;
      }
      case 'tool/result': {
        const s = turn?.step;
        if (!turn || !s) break;
        const d: ToolResultData = event.data;
        const callId = d.message.callId;
        const tool = s.tools.get(callId) ?? { callId, name: 'unknown', spanId: '', answerSeq: event.seq, opened: null, arguments: null };
        (out ??= []).push(toolSpan(turn, s, tool, at, { data: d }));
        s.tools.delete(callId);
        if (s.lastRunningTool === tool) s.lastRunningTool = null;
        break;
      }
      case 'step/end': {
        if (turn?.step) out = closeStep(turn, turn.step, at, false, out);
        if (turn) turn.step = null;
        break;
      }
      case 'turn/end': {
        if (!turn) break;
        if (turn.step) out = closeStep(turn, turn.step, at, false, out);
        (out ??= []).push(turnSpan(turn, at, event.data, event.hash));
        turn = null;
        break;
      }
      case 'subagent/start': {
        const d = event.data;
        const parent = turn?.step?.lastRunningTool?.spanId ?? turn?.spanId ?? null;
        children.set(d.runId, { data: d, opened: at, spanId: idOf('child', event.seq), parentSpanId: parent });
        break;
      }
      case 'subagent/end': {
        const run = children.get(event.data.runId);
        if (!run) break;
        children.delete(event.data.runId);
        (out ??= []).push(childSpan(run, at, event.data));
        break;
      }
      default:
        break;
    }
    return out === null ? NONE_COMPLETED : E.right(out);
  };

  /**
   * The spans a step leaves when it closes, its unanswered request and its calls without a result, added to `into`
   * (an array made only when there is one: a step that closes cleanly leaves none). Returns `into`.
   */
  const closeStep = (t: TurnState, s: StepState, at: Opened, open: boolean, into: DerivedSpan[] | null): DerivedSpan[] | null => {
    // a request that got neither an answer nor a logged failure: the first one (the step stopped without a word
    // from the model), or, while the step is open, the retry a failure announced
    if (s.requestPending && (open || s.attempt === 1)) (into ??= []).push(chatSpan(t, s, at, null, null, open));
    if (s.tools.size > 0) for (const tool of s.tools.values()) (into ??= []).push(toolSpan(t, s, tool, at, null, open));
    return into;
  };

  const openSpans = (): readonly DerivedSpan[] => {
    if (last === null) return NO_SPANS;
    const at = last;
    const out: DerivedSpan[] = [];
    if (turn) {
      if (turn.step) closeStep(turn, turn.step, at, true, out);
      out.push(turnSpan(turn, at, null, undefined, true));
    }
    for (const run of children.values()) out.push(childSpan(run, at, null, true));
    if (idle) out.push(idleSpan(idle, at, true));
    return out;
  };

  return { push, openSpans, sessionId: () => sessionId };
};

/** The result of {@link deriveSpans}: the spans, and the refusal that stopped the derivation, if any. */
export interface DerivedTrace {
  /** The spans the log completes, in the order they complete, then (with `includeOpen`) those still open. */
  readonly spans: readonly DerivedSpan[];
  readonly sessionId: string | null;
  /** The session fold's refusal of an invalid event (the spans before it are kept), else null. */
  readonly error: (DomainError & { readonly seq?: number }) | null;
}

/** Options of {@link deriveSpans}. */
export interface DeriveSpansOptions extends SpanDeriverOptions {
  /** Also close and return the spans still open at the end of the log. @defaultValue true */
  readonly includeOpen?: boolean;
}

/** The spans of a whole log (a stored session, `steerlog trace`). Pure. */
export const deriveSpans = (events: Iterable<LogEvent>, options: DeriveSpansOptions = {}): DerivedTrace => {
  const deriver = createSpanDeriver(options);
  const spans: DerivedSpan[] = [];
  for (const event of events) {
    const r = deriver.push(event);
    if (E.isLeft(r)) return { spans, sessionId: deriver.sessionId(), error: Object.assign(r.left, { seq: event.seq }) };
    for (const s of r.right) spans.push(s);
  }
  if (options.includeOpen ?? true) for (const s of deriver.openSpans()) spans.push(s);
  return { spans, sessionId: deriver.sessionId(), error: null };
};

/** The attributes of a span as a plain record (a convenience for tests and encoders). */
export const attributesOf = (span: DerivedSpan): SpanAttributes => span.attributes;
