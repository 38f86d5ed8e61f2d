import type { HostFrame, QueueRow } from '../../../host/schemas.js';

/** How a durable user message is classified by the Host's history fold. */
export type MessageClass = 'prompt' | 'steering' | 'context';

/** A row of the client mirror: the Host's queue row plus what the console renders. */
export interface MirrorRow {
  readonly id: string;
  readonly placement: QueueRow['placement'];
  readonly claimed: boolean;
  /** Whitespace-collapsed text, non-text blocks as `[type]`, at most 200 code points then `…`. */
  readonly preview: string;
  /** The joined text, or null when any block is not text (such a row is not editable). */
  readonly text: string | null;
  /** Who sent it (`message.source.actor`), null when the row names nobody. */
  readonly actor: string | null;
}

/** A tool call of the running step, as the stream shows it. */
export interface RunningToolCall {
  readonly callId: string;
  readonly name: string;
  readonly state: 'running' | 'done' | 'error';
}

/** One entry of the conversation, from a durable event. */
export type ConversationEntry =
  | { readonly kind: 'user'; readonly seq: number; readonly time: number; readonly id: string; readonly text: string; readonly class: MessageClass | null }
  | { readonly kind: 'assistant'; readonly seq: number; readonly time: number; readonly text: string }
  | { readonly kind: 'turn-end'; readonly seq: number; readonly time: number; readonly turn: number; readonly reason: string };

/** The console's mirror of one live session. */
export interface MirrorState {
  readonly sessionId: string;
  /** seq of the last durable event held; -1 before any. */
  readonly lastSeq: number;
  readonly conversation: readonly ConversationEntry[];
  readonly rows: readonly MirrorRow[];
  readonly running: boolean;
  /**
   * Number of `host/session-status` frames seen for this session. A `running` read before the latest of them is older
   * than it: the history action carries the count its `session.get` was asked at, and its `running` counts only when
   * no status frame came since.
   */
  readonly statusFrames: number;
  /** Number of `session/subscribed` frames seen (one per stream generation). */
  readonly generation: number;
  /** Set when the stream skipped events the console does not hold: the history must be re-read. */
  readonly gap: boolean;
  readonly streamError: string | null;
  /** The assistant text streamed so far by the running step (its `assistant/chunk` events), null between answers. */
  readonly streaming: { readonly turn: number; readonly step: number; readonly text: string } | null;
  /** The running step: its number and tool calls with their state; null between steps. */
  readonly step: { readonly turn: number; readonly step: number; readonly tools: readonly RunningToolCall[] } | null;
  /**
   * When the log admitted each message (ms): the time of the first `agent/inbox/spliced` that inserted its id, from
   * the history and the live stream. A queue row's age counts from it, whenever this console opened.
   */
  readonly admittedAt: ReadonlyMap<string, number>;
}

export const initialMirror = (sessionId: string): MirrorState => ({
  sessionId,
  lastSeq: -1,
  conversation: [],
  rows: [],
  running: false,
  statusFrames: 0,
  generation: 0,
  gap: false,
  streamError: null,
  streaming: null,
  step: null,
  admittedAt: new Map(),
});

type Block = { readonly type: string; readonly text?: string };

const textOf = (content: readonly Block[]): string => content.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join('');

/** The preview of a message's content: whitespace collapsed, non-text as `[type]`, capped at 200 code points + `…`. */
export const previewOf = (content: readonly Block[]): string => {
  const collapsed = content.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join(' ').replace(/\s+/g, ' ').trim();
  const chars = [...collapsed];
  return chars.length > 200 ? `${chars.slice(0, 200).join('')}…` : collapsed;
};

/** A Host queue row as a mirror row. */
export const mirrorRow = (row: QueueRow): MirrorRow => {
  const content = row.message.content as Block[];
  return {
    id: row.id,
    placement: row.placement,
    claimed: row.claimed === true,
    preview: previewOf(content),
    text: content.every((b) => b.type === 'text') ? content.map((b) => b.text ?? '').join('') : null,
    actor: typeof (row.message.source as { actor?: unknown } | undefined)?.actor === 'string' ? ((row.message.source as { actor: string }).actor) : null,
  };
};

/** A durable event as a conversation entry (null for events the conversation does not show). */
export const entryOf = (event: { readonly seq: number; readonly time?: number; readonly type: string; readonly data?: unknown }, cls: MessageClass | null): ConversationEntry | null => {
  const time = event.time ?? 0;
  switch (event.type) {
    case 'user/message': {
      const m = event.data as { id: string; content: Block[] };
      return { kind: 'user', seq: event.seq, time, id: m.id, text: textOf(m.content), class: cls };
    }
    case 'assistant/message': {
      const m = (event.data as { message: { content: Block[] } }).message;
      return { kind: 'assistant', seq: event.seq, time, text: textOf(m.content.filter((b) => b.type === 'text')) };
    }
    case 'turn/end': {
      const d = event.data as { turn: number; reason: { kind: string } };
      return { kind: 'turn-end', seq: event.seq, time, turn: d.turn, reason: d.reason.kind };
    }
    default:
      return null;
  }
};

/** The admissions of one durable event: each id an `agent/inbox/spliced` inserts, with the event's time. */
export const admissionsOf = (event: { readonly time?: number; readonly type: string; readonly data?: unknown }): readonly (readonly [string, number])[] => {
  if (event.type !== 'agent/inbox/spliced' || event.time === undefined) return [];
  const inserted = (event.data as { inserted?: readonly { id?: unknown }[] } | undefined)?.inserted ?? [];
  return inserted.flatMap((m) => (typeof m.id === 'string' ? [[m.id, event.time!] as const] : []));
};

/** `known` plus the admissions not in it yet (the first admission of an id is its admission time). */
const withAdmissions = (known: ReadonlyMap<string, number>, add: readonly (readonly [string, number])[]): ReadonlyMap<string, number> => {
  const fresh = add.filter(([id]) => !known.has(id));
  if (fresh.length === 0) return known;
  const out = new Map(known);
  for (const [id, t] of fresh) if (!out.has(id)) out.set(id, t);
  return out;
};

/** What changes the mirror. */
export type MirrorAction =
  | { readonly kind: 'frame'; readonly frame: HostFrame }
  | {
      readonly kind: 'history';
      readonly entries: readonly ConversationEntry[];
      readonly lastSeq: number;
      readonly running?: boolean;
      /**
       * `statusFrames` when the `running` above was asked for: a status frame seen since is newer, and wins.
       * @defaultValue the state's count (the `running` above is taken)
       */
      readonly statusFramesAt?: number;
      /** The running step as the history ends (`runningStepOf`). */
      readonly current?: Pick<MirrorState, 'streaming' | 'step'>;
      /** The history's admissions (`admissionsOf` each event), in seq order. @defaultValue none */
      readonly admitted?: readonly (readonly [string, number])[];
    }
  | { readonly kind: 'classified'; readonly seq: number; readonly class: MessageClass };

/**
 * The client mirror's rules: a `session/subscribed` (a new stream generation) clears the queue rows and the
 * baseline that follows refills them; a `session/queue` replaces them whole; a live `user/message` with the next
 * seq joins the conversation and retires the first steering row with its id in the same update (so the pending
 * bubble hands over to the durable message with no gap and no duplicate); an overlapping event is dropped, a
 * skipped seq marks a gap for the caller to fill from the history.
 */
export const reduceMirror = (state: MirrorState, action: MirrorAction): MirrorState => {
  switch (action.kind) {
    case 'history': {
      const bySeq = new Map(state.conversation.map((e) => [e.seq, e] as const));
      for (const e of action.entries) bySeq.set(e.seq, e);
      const conversation = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
      const current = action.current && action.lastSeq >= state.lastSeq ? action.current : {};
      const admittedAt = withAdmissions(state.admittedAt, action.admitted ?? []);
      return { ...state, ...current, conversation, admittedAt, lastSeq: Math.max(state.lastSeq, action.lastSeq), gap: false, ...(action.running !== undefined && (action.statusFramesAt ?? state.statusFrames) === state.statusFrames ? { running: action.running } : {}) };
    }
    case 'classified':
      return { ...state, conversation: state.conversation.map((e) => (e.kind === 'user' && e.seq === action.seq ? { ...e, class: action.class } : e)) };
    case 'frame': {
      const f = action.frame;
      switch (f.type) {
        case 'session/subscribed':
          if (f.sessionId !== state.sessionId) return state;
          return { ...state, rows: [], generation: state.generation + 1, gap: state.gap || f.lastSeq > state.lastSeq, streamError: null };
        case 'session/queue': {
          if (f.sessionId !== state.sessionId) return state;
          return { ...state, rows: f.items.map(mirrorRow) };
        }
        case 'host/session-status':
          return f.sessionId === state.sessionId ? { ...state, running: f.running, statusFrames: state.statusFrames + 1 } : state;
        case 'session/event': {
          if (f.sessionId !== state.sessionId) return state;
          const seq = f.event.seq;
          if (seq <= state.lastSeq) return state;
          if (seq > state.lastSeq + 1) return { ...state, gap: true };
          const entry = entryOf(f.event as { seq: number; time?: number; type: string; data?: unknown }, null);
          let rows = state.rows;
          if (entry?.kind === 'user') {
            const i = rows.findIndex((r) => r.placement === 'steering' && r.id === entry.id);
            if (i >= 0) rows = [...rows.slice(0, i), ...rows.slice(i + 1)];
          }
          const admittedAt = withAdmissions(state.admittedAt, admissionsOf(f.event as { time?: number; type: string; data?: unknown }));
          return { ...state, ...runningStep(state, f.event as { type: string; data?: unknown }), lastSeq: seq, rows, admittedAt, conversation: entry ? [...state.conversation, entry] : state.conversation };
        }
        case 'stream/error':
          return { ...state, streamError: f.error.message };
        case 'host/session-added':
        case 'host/session-removed':
          return state;
      }
    }
  }
};

/** What a durable event changes of the running step: streamed text, tool calls and their state. */
const runningStep = (state: MirrorState, event: { readonly type: string; readonly data?: unknown }): Pick<MirrorState, 'streaming' | 'step'> => {
  const d = (event.data ?? {}) as { turn?: number; step?: number; chunk?: { type?: string; text?: string }; callId?: string; name?: string; message?: { callId?: string; isError?: boolean }; error?: unknown };
  const { streaming, step } = state;
  switch (event.type) {
    case 'step/start':
      return { streaming: null, step: { turn: d.turn ?? 0, step: d.step ?? 0, tools: [] } };
    case 'assistant/chunk': {
      if (d.chunk?.type !== 'text') return { streaming, step };
      const same = streaming && streaming.turn === d.turn && streaming.step === d.step;
      return { streaming: { turn: d.turn ?? 0, step: d.step ?? 0, text: `${same ? streaming.text : ''}${d.chunk.text ?? ''}` }, step };
    }
    case 'assistant/message':
      return { streaming: null, step };
    case 'tool/call':
      return { streaming, step: step ? { ...step, tools: [...step.tools, { callId: d.callId ?? '', name: d.name ?? 'tool', state: 'running' }] } : step };
    case 'tool/result': {
      if (!step) return { streaming, step };
      const failed = d.error !== undefined || d.message?.isError === true;
      return { streaming, step: { ...step, tools: step.tools.map((t) => (t.callId === d.message?.callId ? { ...t, state: failed ? 'error' : 'done' } : t)) } };
    }
    case 'step/end':
    case 'turn/end':
      return { streaming: null, step: null };
    default:
      return { streaming, step };
  }
};

/** The running step at the end of a history (its streamed text and tool calls): what a console that opens mid-step shows. */
export const runningStepOf = (events: readonly { readonly type: string; readonly data?: unknown }[]): Pick<MirrorState, 'streaming' | 'step'> => {
  let state: MirrorState = initialMirror('');
  for (const e of events) state = { ...state, ...runningStep(state, e) };
  return { streaming: state.streaming, step: state.step };
};
