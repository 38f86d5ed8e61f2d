import { Subject, type Subscription } from 'rxjs';
import type { InboxSplicedData, LogEvent } from '../domain/events.js';
import type { UserMessage } from '../domain/message.js';
import { queueView, type QueueSnapshot } from '../projections/session/queue-view.js';
import type { Agent } from '../runtime/agent.js';
import { queueView as domainQueueView } from '../domain/queue-view.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import { envelopeOfRecorded } from '../runtime/ports/recorded-envelope.js';
import type { HostFrame, QueueRow } from './schemas.js';

type SessionEventFrame = Extract<HostFrame, { type: 'session/event' }>;

export interface LiveSessionOptions {
  /** Keep a claimed steering row until its `user/message` (see `queueView`). @defaultValue true */
  readonly gaplessHandoff: boolean;
  /** Emit a splice's `session/queue` frame before its `session/event` frame (the reference's order). @defaultValue false */
  readonly queueBeforeEvent: boolean;
  /** Where this session's frames go, in order. */
  readonly publish: (frame: HostFrame) => void;
  /**
   * Whether anyone receives frames now. While nobody does, no frame is built (a queue frame copies every pending row,
   * so building frames nobody reads cost the Host O(queue) per splice under load); `queue` stays current either way.
   * @defaultValue always true
   */
  readonly listening?: () => boolean;
  /** The store the session's log is in (the ids admitted before the window of an agent resumed from a fold snapshot). */
  readonly store: EventStore;
}

/** Where a message id was first admitted to the session: the seq of the splice that inserted it. */
export interface Admission {
  readonly seq: number;
  readonly message: UserMessage;
}

/**
 * A session whose Agent is attached to this host: its frames for the live mirror (events, queue snapshots from the
 * `queueView` projection, status) and the index of every message id ever admitted, derived from its log.
 */
export class LiveSession {
  readonly agent: Agent;
  readonly #admitted = new Map<string, number>();
  readonly #events = new Subject<LogEvent>();
  readonly #subscription: Subscription;
  readonly #offs: (() => void)[] = [];
  #snapshots: QueueSnapshot[] = [];
  #latest: QueueSnapshot | null = null;
  readonly #store: EventStore;
  /**
   * The next seq the queue projection folds: the projection runs only when its snapshots are wanted (a frame to
   * publish, a read of `queue`), over the events the agent holds, so a session nobody listens to pays no fold per event.
   */
  #folded: number;
  /** The ids admitted before the window of an agent resumed from a fold snapshot, once read. */
  #before: Promise<ReadonlyMap<string, number>> | null = null;

  constructor(agent: Agent, options: LiveSessionOptions) {
    this.agent = agent;
    this.#store = options.store;
    // an agent resumed from a fold snapshot holds a window of its log: the queue starts from its fold state (no turn is
    // open after a resume, so no claimed row awaits its user/message), and the ids admitted before the window are
    // read from the store when first asked for (`admission`)
    const resumed = agent.windowState();
    this.#subscription = this.#events.pipe(queueView({ gaplessHandoff: options.gaplessHandoff, ...(resumed ? { from: resumed } : {}) })).subscribe((s) => {
      this.#snapshots.push(s);
      this.#latest = s;
    });
    if (resumed) {
      for (const e of agent.events) this.#indexAdmitted(e);
      const items = domainQueueView(resumed.inbox);
      this.#latest = { seq: agent.length - 1, items };
      this.#folded = agent.length;
    } else {
      for (const e of agent.events) this.#indexAdmitted(e);
      this.#folded = agent.base;
    }
    const sessionId = agent.sessionId;
    const listening = options.listening ?? (() => true);
    this.#offs.push(
      agent.onEvent((event) => {
        this.#indexAdmitted(event);
        // nobody receives frames: the queue is folded when next read or listened to (the events stay held by the agent)
        if (!listening()) return;
        this.#foldTo(event.seq + 1);
        // the snapshots of this event (a read of `queue` may have folded it already); earlier ones were not listened to
        const snapshots = this.#snapshots.filter((s) => s.seq === event.seq);
        this.#snapshots = [];
        const eventFrame: HostFrame = { type: 'session/event', sessionId, event: event as unknown as SessionEventFrame['event'] };
        const queueFrames = snapshots.map((s): HostFrame => queueFrame(sessionId, s));
        if (options.queueBeforeEvent) for (const f of queueFrames) options.publish(f);
        options.publish(eventFrame);
        if (!options.queueBeforeEvent) for (const f of queueFrames) options.publish(f);
      }),
      agent.on('status', (status) => options.publish({ type: 'host/session-status', sessionId, running: status === 'running' })),
    );
  }

  /** The latest queue snapshot (null before the session's first splice). */
  get queue(): QueueSnapshot | null {
    const last = this.agent.length - 1;
    this.#foldTo(last + 1);
    // kept: the snapshots of the event being published now, for its frames
    if (this.#snapshots.length > 0) this.#snapshots = this.#snapshots.filter((s) => s.seq === last);
    return this.#latest;
  }
  /** The last seq of the live log. */
  get lastSeq(): number {
    return this.agent.length - 1;
  }

  /**
   * Where this message id was first admitted, if it ever was. For an agent that holds a window of its log, the ids
   * admitted before it are read from the store at the first ask that the window cannot answer (once; then kept).
   */
  async admission(messageId: string): Promise<Admission | undefined> {
    const known = this.knownAdmission(messageId);
    if (known !== null) return known;
    let seq = this.#admitted.get(messageId);
    if (seq === undefined) {
      this.#before ??= admittedBefore(this.#store, this.agent.sessionId, this.agent.base);
      seq = (await this.#before).get(messageId);
    }
    if (seq === undefined) return undefined;
    const event = this.agent.eventAt(seq) ?? (await eventFromStore(this.#store, this.agent.sessionId, seq));
    return admissionAt(seq, event, messageId);
  }

  /**
   * {@link admission} when the events held in memory answer it (no store read, nothing awaited): where the id was
   * first admitted, undefined when it never was, null when only the store can tell (an agent holding a window of
   * its log, and an id not admitted within it, or admitted before it).
   */
  knownAdmission(messageId: string): Admission | undefined | null {
    const seq = this.#admitted.get(messageId);
    if (seq === undefined) return this.agent.base > 0 ? null : undefined;
    const event = this.agent.eventAt(seq);
    return event === undefined ? null : admissionAt(seq, event, messageId);
  }

  detach(): void {
    for (const off of this.#offs.splice(0)) off();
    this.#subscription.unsubscribe();
  }

  /** Folds the held events before `end` not folded yet into the queue projection. */
  #foldTo(end: number): void {
    while (this.#folded < end) {
      const seq = this.#folded++;
      this.#events.next(this.agent.eventAt(seq)!);
    }
  }

  #indexAdmitted(event: LogEvent): void {
    if (event.type !== 'agent/inbox/spliced') return;
    for (const m of (event.data as InboxSplicedData).inserted) if (!this.#admitted.has(m.id)) this.#admitted.set(m.id, event.seq);
  }
}

/** The admission of `messageId` by the splice `event` at `seq`. */
const admissionAt = (seq: number, event: LogEvent, messageId: string): Admission => ({
  seq,
  message: (event.data as InboxSplicedData).inserted.find((m) => m.id === messageId)!,
});

/** A `session/queue` frame of a snapshot. */
export const queueFrame = (sessionId: string, s: QueueSnapshot): HostFrame => ({
  type: 'session/queue',
  sessionId,
  seq: s.seq,
  items: s.items.map((i) => ({ id: i.id, placement: i.placement, message: i.message as unknown as QueueRow['message'], ...(i.claimed ? { claimed: true as const } : {}) })),
});

/** The first admission seq of every message id admitted in the events before `base` (read from the store). */
const admittedBefore = async (store: EventStore, sessionId: string, base: number): Promise<ReadonlyMap<string, number>> => {
  const out = new Map<string, number>();
  for await (const r of store.read(sessionId, { maxCount: base })) {
    if (r.type !== 'agent/inbox/spliced') continue;
    const inserted = (r.data as { inserted?: unknown }).inserted;
    if (!Array.isArray(inserted)) continue;
    for (const m of inserted as { id?: unknown }[]) if (typeof m?.id === 'string' && !out.has(m.id)) out.set(m.id, Number(r.revision));
  }
  return out;
};

/** The event at `seq` of a stream, read from the store (durable: it is before the live window). */
const eventFromStore = async (store: EventStore, sessionId: string, seq: number): Promise<LogEvent> => {
  for await (const r of store.read(sessionId, { from: BigInt(seq), maxCount: 1 })) return { ...envelopeOfRecorded(r), seq } as LogEvent;
  throw new Error(`event ${seq} of ${sessionId} is not in the store`);
};
