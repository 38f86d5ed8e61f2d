import type { Actor } from '../domain/event-metadata.js';
import type { SessionCreatedData } from '../domain/events.js';
import type { Agent } from '../runtime/agent.js';
import { consoleLogger, type Logger } from '../runtime/logger.js';
import type { EventStore } from '../runtime/ports/event-store.js';
import type { KeyStore } from '../runtime/ports/key-store.js';
import type { Runtime } from '../runtime/runtime.js';
import { SessionCatalog } from './catalog.js';
import { invalidArgument } from '../runtime/arguments.js';
import { HostError, isHostError } from './errors.js';
import { largestImageBytes, PROMPT_ROOM_BYTES } from './prompt.js';
import type { CallContext, CallResult, HostOptions, HostSignal } from './host-types.js';
import { LiveSession } from './live-session.js';
import { sessionCreate, sessionFork, type NewSessionPort } from './new-sessions.js';
import { ownHere } from './ownership-checks.js';
import { localOwnership, type SessionOwnership } from './ports/ownership.js';
import { fastPromptRequest, HOST_REQUEST_SCHEMAS, isHostMethod, type HostMethod, type HostRequest, type HostResult } from './schemas.js';
import { sessionCancel, sessionUpdateQueue, sessionWake, type SessionControlPort } from './session-control.js';
import { sessionPrompt, type PromptPort } from './session-prompt.js';
import { readHeader, readSession, sessionGet, sessionHistory, sessionList, type SessionReadPort } from './session-reads.js';
import { wholeLiveLog } from './live-log.js';
import { subagentHistory, subagentInterrupt, subagentList, subagentPrompt, type SubagentRouteDeps } from './subagent-methods.js';

/** The actor of what the host does on its own: stopping turns at shutdown or when another host took the session. */
const HOST_ACTOR: Actor = Object.freeze({ id: 'steerlog-host', kind: 'system' });

/** The longest delay a Node timer holds, ms (2^31 - 1). */
const MAX_TIMER_MS = 2_147_483_647;

/** A child session's header: kind continuable or one-shot, or made by its parent as a sub-agent. */
const isChildHeader = (h: SessionCreatedData): boolean => h.kind !== 'ordinary' || (h.origin === 'subagent' && h.parentSession !== undefined);

/** `agent-busy {reason: 'subagent-owned'}`: a child session is reached through the subagent routes. */
const subagentOwned = (sessionId: string, h: SessionCreatedData): HostError =>
  new HostError('agent-busy', `session ${sessionId} is a ${h.kind} child: use subagent delivery`, { reason: 'subagent-owned' });

/**
 * The Host: admits prompts, edits queues, cancels turns, and mirrors every live session. Transport-free: a request
 * is a method name, an untrusted payload and a context; the answer is a result or a typed error body.
 */
export class Host {
  readonly store: EventStore;
  readonly #runtime: Runtime;
  readonly #ownership: SessionOwnership;
  readonly #logger: Logger;
  readonly #opts: HostOptions;
  readonly #catalog: SessionCatalog;
  readonly #live = new Map<string, LiveSession>();
  readonly #resolving = new Map<string, Promise<LiveSession>>();
  readonly #offs = new Map<string, () => void>();
  readonly #listeners = new Set<(signal: HostSignal) => void>();
  /** Listeners to sessions attaching and leaving only (no frames: they do not make the live sessions build frames). */
  readonly #sessionListeners = new Set<(signal: HostSignal) => void>();
  readonly #offLost: () => void;
  /** What the session routes reach of this host. */
  readonly #port: SessionReadPort & PromptPort & SessionControlPort & NewSessionPort;

  /** The largest image a prompt may hold here, bytes (`HostOptions.maxImageBytes`, else the largest the event limit carries). */
  readonly maxImageBytes: number;

  constructor(options: HostOptions) {
    const carried = largestImageBytes({ maxEventBytes: options.runtime.maxEventBytes, sealed: options.runtime.keyStore !== null });
    if (options.maxImageBytes !== undefined && !(Number.isSafeInteger(options.maxImageBytes) && options.maxImageBytes >= 0 && options.maxImageBytes <= carried)) {
      throw invalidArgument(
        'Host options.maxImageBytes',
        `${options.maxImageBytes} is not an image size a prompt can carry: its base64 (4/3) and ${PROMPT_ROOM_BYTES} bytes for the rest must fit the event limit (${options.runtime.maxEventBytes}${options.runtime.keyStore ? ', sealed' : ''}); at most ${carried}`,
      );
    }
    // past 2^31 - 1 ms a Node timer fires at once: every durable prompt would time out
    if (options.durableTimeoutMs !== undefined && !(Number.isSafeInteger(options.durableTimeoutMs) && options.durableTimeoutMs > 0 && options.durableTimeoutMs <= MAX_TIMER_MS)) {
      throw invalidArgument('Host options.durableTimeoutMs', `${String(options.durableTimeoutMs)} is not a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
    }
    if (options.admissionGate !== undefined && typeof (options.admissionGate as { next?: unknown } | null)?.next !== 'function') {
      throw invalidArgument('Host options.admissionGate', 'expected a LoopGate (next)');
    }
    this.maxImageBytes = options.maxImageBytes ?? carried;
    this.#opts = options;
    this.#runtime = options.runtime;
    this.store = options.runtime.store;
    this.#ownership = options.ownership ?? localOwnership();
    this.#logger = options.logger ?? consoleLogger;
    this.#catalog = new SessionCatalog(this.store);
    this.#offLost = this.#ownership.onLost((id) => this.#lose(id));
    this.#port = {
      store: this.store,
      keyStore: this.#runtime.keyStore,
      live: (id) => this.#live.get(id),
      catalog: this.#catalog,
      options: { ...options, maxImageBytes: this.maxImageBytes },
      logger: this.#logger,
      liveOrdinary: (id) => {
        const live = this.#live.get(id);
        return live !== undefined && !isChildHeader(live.agent.header) ? live : undefined;
      },
      refuseChild: (id) => this.#refuseChild(id),
      resolve: (id) => this.#resolve(id),
      newId: () => this.#newId(),
      ownership: this.#ownership,
      runtime: this.#runtime,
      attach: (agent, created) => this.#attach(agent, created),
    };
  }

  /** The data keys this host's sessions are sealed with; null when content is stored in clear. */
  get keyStore(): KeyStore | null {
    return this.#runtime.keyStore;
  }

  /** Sessions live on this host. */
  get live(): ReadonlyMap<string, LiveSession> {
    return this.#live;
  }

  /** The session-ownership port this host holds its leases through (read by the readiness probe). */
  get ownership(): SessionOwnership {
    return this.#ownership;
  }

  /** Number of listeners (open live-mirror streams). */
  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Listens to every frame and attachment (synchronously, in order). */
  listen(listener: (signal: HostSignal) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Listens to sessions attaching to and leaving this host only (`attached` and `detached` signals, synchronously, in
   * order), never to frames: unlike `listen`, it does not make the live sessions build mirror frames, so a listener
   * that only follows sessions (the metrics) costs nothing per event.
   */
  listenSessions(listener: (signal: Exclude<HostSignal, { kind: 'frame' }>) => void): () => void {
    const l = listener as (signal: HostSignal) => void;
    this.#sessionListeners.add(l);
    return () => this.#sessionListeners.delete(l);
  }

  /** Runs one method. Never throws: refusals are typed error bodies; anything unexpected is logged and answered `internal`. */
  async call(method: string, payload: unknown, ctx: CallContext): Promise<CallResult> {
    try {
      if (!isHostMethod(method)) throw new HostError('bad-request', `unknown method ${method}`, { issues: [{ path: ['method'], message: `unknown method ${method}` }] });
      // the prompt's payload, the hot path, is checked by hand first; anything the check does not take goes to its schema
      const fast = method === 'session.prompt' ? fastPromptRequest(payload) : null;
      const parsed = fast !== null ? ({ success: true, data: fast } as const) : HOST_REQUEST_SCHEMAS[method].safeParse(payload);
      if (!parsed.success) {
        throw new HostError('bad-request', `invalid ${method} payload`, {
          issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })),
        });
      }
      return { ok: true, value: await this.#dispatch(method, parsed.data as never, ctx) };
    } catch (e) {
      if (isHostError(e)) return { ok: false, error: e.toBody() };
      this.#logger.warn(`request ${ctx.requestId ?? '-'} ${method} failed`, e);
      return { ok: false, error: { code: 'internal', message: `internal error (request ${ctx.requestId ?? ctx.rpcId})`, details: {} }, crashed: true };
    }
  }

  /**
   * Drains the children first (each resident child is canceled with cause `parent`, its log flushed, its settlement
   * injected into its parent without waking it, `subagent/end` logged), then aborts running turns (pending input is
   * kept, parked), makes every live log durable, waits for the fold snapshots their appends started, releases the leases.
   */
  async close(): Promise<void> {
    this.#offLost();
    await this.#opts.children?.drain().catch((e) => this.#logger.warn('draining the children failed', e));
    const sessions = [...this.#live.values()];
    for (const s of sessions) s.agent.cancel({ kind: 'hook', reason: 'host-shutdown' }, { keepInbox: true, actor: HOST_ACTOR });
    await Promise.allSettled(sessions.map(async (s) => {
      await s.agent.whenIdle();
      await s.agent.checkpoint();
    }));
    for (const s of sessions) this.#detach(s.agent.sessionId);
    // the fold snapshots the live sessions' last appends started (the store is closed after this)
    await this.#runtime.foldSnapshotsSettled().catch((e: unknown) => this.#logger.warn('taking the live fold snapshots failed', e));
    await Promise.allSettled(sessions.map((s) => this.#ownership.release(s.agent.sessionId)));
    await this.#ownership.close();
  }

  #dispatch<M extends HostMethod>(method: M, request: HostRequest<M>, ctx: CallContext): Promise<HostResult<M>> {
    const r = request as never;
    switch (method) {
      case 'session.create':
        return sessionCreate(this.#port, r, ctx) as Promise<HostResult<M>>;
      case 'session.list':
        return sessionList(this.#port, r as HostRequest<'session.list'>) as Promise<HostResult<M>>;
      case 'session.get':
        return sessionGet(this.#port, r) as Promise<HostResult<M>>;
      case 'session.history':
        return sessionHistory(this.#port, r) as Promise<HostResult<M>>;
      case 'session.prompt':
        return sessionPrompt(this.#port, r, ctx) as Promise<HostResult<M>>;
      case 'session.updateQueue':
        return this.#ordinaryOnly(r, () => sessionUpdateQueue(this.#port, r, ctx)) as Promise<HostResult<M>>;
      case 'session.cancel':
        return this.#ordinaryOnly(r, () => sessionCancel(this.#port, r, ctx)) as Promise<HostResult<M>>;
      case 'session.wake':
        return this.#ordinaryOnly(r, () => sessionWake(this.#port, r, ctx)) as Promise<HostResult<M>>;
      case 'session.fork':
        return this.#ordinaryOnly(r, () => sessionFork(this.#port, r, ctx)) as Promise<HostResult<M>>;
      case 'subagent.prompt':
        return subagentPrompt(this.#subagentDeps(), r, ctx) as Promise<HostResult<M>>;
      case 'subagent.interrupt':
        return Promise.resolve(subagentInterrupt(this.#subagentDeps(), r, ctx)) as Promise<HostResult<M>>;
      case 'subagent.list':
        return Promise.resolve(subagentList(this.#subagentDeps(), r)) as Promise<HostResult<M>>;
      case 'subagent.history':
        return subagentHistory(this.#subagentDeps(), r) as Promise<HostResult<M>>;
      default: {
        const never: never = method;
        throw new HostError('bad-request', `unknown method ${String(never)}`);
      }
    }
  }

  #subagentDeps(): SubagentRouteDeps {
    return {
      children: this.#opts.children,
      images: { acceptsImages: this.#opts.modelAcceptsImages ?? true, maxImageBytes: this.maxImageBytes },
      liveAgent: (id) => this.#live.get(id)?.agent,
      catalogEntry: (id) => this.#catalog.lookup(id),
      sessionEvents: async (id) => {
        const agent = this.#agentOf(id);
        return agent ? wholeLiveLog(this.store, agent, this.keyStore) : (await readSession(this.store, id, undefined)).events;
      },
      logger: this.#logger,
    };
  }

  /**
   * A generic session route runs only on an ordinary session: a child (continuable or one-shot, or made by its
   * parent as a sub-agent) is reached through the subagent routes, so the generic ones answer `agent-busy`.
   */
  async #ordinaryOnly<T>(request: { readonly sessionId: string }, run: () => Promise<T>): Promise<T> {
    await this.#refuseChild(request.sessionId);
    return run();
  }

  /** Refuses a child session `agent-busy {reason: 'subagent-owned'}`. */
  async #refuseChild(sessionId: string): Promise<void> {
    // live here, or live in the runtime (a child its manager runs: no store read), else the store's header
    const agent = this.#agentOf(sessionId);
    const header = agent ? agent.header : await readHeader(this.store, sessionId);
    if (header && isChildHeader(header)) throw subagentOwned(sessionId, header);
  }

  /** The session's agent when live here or in the runtime (a child its manager runs), else undefined. */
  #agentOf(sessionId: string): Agent | undefined {
    return this.#live.get(sessionId)?.agent ?? this.#runtime.liveAgent(sessionId);
  }

  // ---- resolution ----------------------------------------------------------------------------------------------

  /** The live session, resuming it on demand; concurrent callers for one id share one resume. */
  #resolve(sessionId: string): Promise<LiveSession> {
    const live = this.#live.get(sessionId);
    if (live) return Promise.resolve(live);
    let pending = this.#resolving.get(sessionId);
    if (!pending) {
      pending = this.#resume(sessionId).finally(() => this.#resolving.delete(sessionId));
      this.#resolving.set(sessionId, pending);
    }
    return pending;
  }

  async #resume(sessionId: string): Promise<LiveSession> {
    const header = await readHeader(this.store, sessionId);
    if (!header) throw new HostError('session-not-found', `no session ${sessionId}`, { sessionId });
    if (header.kind !== 'ordinary') throw subagentOwned(sessionId, header);
    await ownHere(this.#ownership, sessionId);
    let agent: Agent;
    try {
      agent = await this.#runtime.resume(sessionId);
    } catch (e) {
      await this.#ownership.release(sessionId).catch(() => {});
      this.#logger.warn(`resume of ${sessionId} failed`, e);
      throw new HostError('internal', `resume of ${sessionId} failed`, {});
    }
    return this.#attach(agent, false);
  }

  #attach(agent: Agent, created: boolean): LiveSession {
    const session = new LiveSession(agent, {
      gaplessHandoff: !this.#opts.referenceFrames,
      queueBeforeEvent: this.#opts.referenceFrames ?? false,
      publish: (frame) => this.#emit({ kind: 'frame', frame }),
      listening: () => this.#listeners.size > 0,
      store: this.store,
    });
    this.#live.set(agent.sessionId, session);
    this.#opts.onSession?.(agent);
    const offFence = agent.on('error', (e) => {
      if (e.error.code === 'session-fenced') this.#lose(agent.sessionId);
    });
    this.#offs.set(agent.sessionId, offFence);
    this.#emit({ kind: 'attached', session, created });
    return session;
  }

  /** Another host took the session (lease lost, stream fenced): stop its turn here and let it go. */
  #lose(sessionId: string): void {
    const session = this.#live.get(sessionId);
    if (!session) return;
    this.#logger.warn(`session ${sessionId}: ownership lost; this host lets it go`);
    try {
      session.agent.cancel({ kind: 'hook', reason: 'ownership-lost' }, { keepInbox: true, actor: HOST_ACTOR });
    } catch {
      // fenced: nothing more to write
    }
    this.#detach(sessionId);
    this.#runtime.forget(sessionId);
  }

  #detach(sessionId: string): void {
    const session = this.#live.get(sessionId);
    if (!session) return;
    session.detach();
    this.#offs.get(sessionId)?.();
    this.#offs.delete(sessionId);
    this.#live.delete(sessionId);
    this.#emit({ kind: 'detached', sessionId });
  }

  #emit(signal: HostSignal): void {
    const listeners = signal.kind === 'frame' ? [...this.#listeners] : [...this.#listeners, ...this.#sessionListeners];
    for (const l of listeners) {
      try {
        l(signal);
      } catch (e) {
        this.#logger.warn('a live-mirror listener threw (contained)', e);
      }
    }
  }

  #newId(): string {
    return this.#opts.newMessageId?.() ?? globalThis.crypto.randomUUID();
  }
}
