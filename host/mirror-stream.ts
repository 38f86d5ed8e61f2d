import type { LogEvent } from '../domain/events.js';
import type { Host } from './host.js';
import type { HostSignal } from './host-types.js';
import { queueFrame, type LiveSession } from './live-session.js';
import { HostSessionIdSchema, type HostFrame } from './schemas.js';

/** Per session, the seq of the last event a client holds: what `Last-Event-ID` carries. */
export type StreamCursor = ReadonlyMap<string, number>;

/** The cursor as an SSE event id: base64url of `{"<sessionId>": lastSeq, …}`. */
export const encodeCursor = (cursor: StreamCursor): string => Buffer.from(JSON.stringify(Object.fromEntries(cursor))).toString('base64url');

/** Reads a cursor; anything that is not one (wrong encoding, a bad session id or seq) reads as no cursor. */
export const decodeCursor = (id: string | undefined): StreamCursor | null => {
  if (!id) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(id, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const out = new Map<string, number>();
    for (const [k, v] of Object.entries(parsed)) {
      if (!HostSessionIdSchema.safeParse(k).success || !Number.isSafeInteger(v) || (v as number) < -1) return null;
      out.set(k, v as number);
    }
    return out;
  } catch {
    return null;
  }
};

/** Options of the live mirror stream: which sessions to mirror, and the cursor to resume after (`Last-Event-ID`). */
export interface MirrorStreamOptions {
  /** Only these sessions. @defaultValue every session live on this host, now and later */
  readonly sessions?: readonly string[];
  /** Resume after these seqs (from `Last-Event-ID`): the missed events are replayed first. */
  readonly cursor?: StreamCursor | null;
}

/** Receives a stream's frames in order; `id` is set on `session/event` frames (the cursor after that event). */
export type FrameSink = (frame: HostFrame, id?: string) => void;

/**
 * One client's live mirror: `session/subscribed {sessionId, lastSeq}` per session, the missed events after a
 * cursor, a baseline `session/queue` for sessions with pending work, then live frames. Each session's events are
 * guarded by seq, so a replay and the live feed never leave a gap or deliver an event twice.
 */
export class MirrorStream {
  readonly #host: Host;
  readonly #filter: ReadonlySet<string> | null;
  readonly #cursor: StreamCursor;
  readonly #sink: FrameSink;
  /** Per followed session: the seq of the last event delivered. */
  readonly #delivered = new Map<string, number>();
  #buffer: HostSignal[] | null = [];
  #off: (() => void) | null = null;

  constructor(host: Host, options: MirrorStreamOptions, sink: FrameSink) {
    this.#host = host;
    this.#filter = options.sessions ? new Set(options.sessions) : null;
    this.#cursor = options.cursor ?? new Map();
    this.#sink = sink;
  }

  /** Subscribes, replays and sends baselines; from then on frames flow as they happen. */
  async start(): Promise<void> {
    this.#off = this.#host.listen((s) => (this.#buffer ? this.#buffer.push(s) : this.#on(s)));
    const ids = this.#filter ? [...this.#filter] : [...new Set([...this.#host.live.keys(), ...this.#cursor.keys()])];
    // cold sessions: their last seq, and what the store holds after the cursor (read before anything is sent)
    const cold = new Map<string, { readonly lastSeq: number; readonly events: LogEvent[] } | null>();
    for (const id of ids) if (!this.#host.live.has(id)) cold.set(id, await this.#readStored(id, this.#cursor.get(id)));
    for (const id of ids) {
      const live = this.#host.live.get(id);
      const from = this.#cursor.get(id);
      if (live) {
        // an agent resumed from a fold snapshot holds its log from `base` on: a cursor before it is served from the store first
        const before = from !== undefined && from + 1 < live.agent.base ? await this.#readStored(id, from, live.agent.base - from - 1) : null;
        this.#subscribe(id, from ?? live.lastSeq, before ? before.events.concat(live.agent.events) : live.agent.events);
        continue;
      }
      const stored = cold.get(id);
      if (stored) this.#subscribe(id, stored.lastSeq, stored.events);
    }
    if (this.#filter) for (const id of this.#filter) if (!this.#delivered.has(id)) this.#delivered.set(id, -1);
    for (const id of this.#delivered.keys()) {
      const live = this.#host.live.get(id);
      if (live) this.#baseline(live);
    }
    const buffered = this.#buffer ?? [];
    this.#buffer = null;
    for (const s of buffered) this.#on(s);
  }

  close(): void {
    this.#off?.();
    this.#off = null;
  }

  #subscribe(sessionId: string, lastSeq: number, events: readonly LogEvent[]): void {
    this.#sink({ type: 'session/subscribed', sessionId, lastSeq });
    this.#delivered.set(sessionId, lastSeq);
    this.#replay(sessionId, events);
  }

  #baseline(session: LiveSession): void {
    const id = session.agent.sessionId;
    this.#sink({ type: 'host/session-status', sessionId: id, running: session.agent.status === 'running' });
    const q = session.queue;
    if (q && q.items.length > 0) this.#sink(queueFrame(id, q));
  }

  /** Sends the events after the last delivered one (events may start at any seq: a store read after a cursor). */
  #replay(sessionId: string, events: readonly LogEvent[]): void {
    for (const e of events) this.#deliver(sessionId, e);
  }

  #deliver(sessionId: string, event: LogEvent): void {
    const last = this.#delivered.get(sessionId)!;
    if (event.seq <= last) return;
    if (event.seq !== last + 1) {
      const live = this.#host.live.get(sessionId);
      if (!live) return; // cannot fill: the next attach replays from the live log
      for (let s = last + 1; s < event.seq; s++) {
        const held = live.agent.eventAt(s);
        if (held === undefined) return; // not held in memory (before a resumed agent's window): the next attach replays from the store
        this.#deliver(sessionId, held);
      }
    }
    this.#delivered.set(sessionId, event.seq);
    this.#sink({ type: 'session/event', sessionId, event: event as never }, encodeCursor(this.#delivered));
  }

  #follows(sessionId: string): boolean {
    return this.#filter ? this.#filter.has(sessionId) : true;
  }

  #on(signal: HostSignal): void {
    switch (signal.kind) {
      case 'attached': {
        const session = signal.session;
        const id = session.agent.sessionId;
        if (!this.#follows(id)) return;
        if (signal.created) this.#sink({ type: 'host/session-added', sessionId: id, kind: createdKind(session), ...parentOf(session) });
        if (this.#delivered.has(id)) this.#replay(id, session.agent.events);
        else this.#subscribe(id, session.lastSeq, session.agent.events);
        this.#baseline(session);
        return;
      }
      case 'detached':
        if (this.#delivered.has(signal.sessionId)) this.#sink({ type: 'host/session-removed', sessionId: signal.sessionId });
        return;
      case 'frame': {
        const f = signal.frame;
        if (f.type === 'session/event') {
          if (this.#delivered.has(f.sessionId)) this.#deliver(f.sessionId, f.event as unknown as LogEvent);
          return;
        }
        if ('sessionId' in f && !this.#delivered.has(f.sessionId)) return;
        this.#sink(f);
        return;
      }
      default: {
        const never: never = signal;
        return never;
      }
    }
  }

  /** A cold session: the seq the client holds (its cursor, else the stored tail) and the stored events after it; null if absent. */
  async #readStored(sessionId: string, after: number | undefined, maxCount?: number): Promise<{ lastSeq: number; events: LogEvent[] } | null> {
    const rev = await this.#host.store.revision(sessionId);
    if (rev === 'no_stream') return null;
    if (after === undefined) return { lastSeq: Number(rev), events: [] };
    const events: LogEvent[] = [];
    for await (const r of this.#host.store.read(sessionId, { from: BigInt(after + 1), ...(maxCount !== undefined ? { maxCount } : {}) })) {
      events.push({ seq: Number(r.revision), id: r.id, time: r.time, type: r.type, data: r.data, ...(r.ignorable ? { ignorable: true } : {}) } as LogEvent);
    }
    return { lastSeq: after, events };
  }
}

const createdKind = (s: LiveSession): string => s.agent.header.kind;
const parentOf = (s: LiveSession): { parentSessionId?: string } => {
  const p = s.agent.header.parentSession;
  return p !== undefined ? { parentSessionId: p } : {};
};
