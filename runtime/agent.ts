import type { MessageId } from '../domain/brand.js';
import type { AbortCause, EventDataByType, InboxSplicedData, InboxTarget, LogEvent } from '../domain/events.js';
import { hasPending, initialInboxState } from '../domain/inbox/inbox-state.js';
import type { UserMessage } from '../domain/message.js';
import type { Actor, EventMetadata } from '../domain/event-metadata.js';
import { currentHook, outsideHooks, runInHook } from './hook-scope.js';
import { provenance } from './provenance.js';
import { modelMessageOf, type ModelMessage } from '../domain/model-messages.js';
import { latchesWake, publicStatus } from '../domain/turn-machine.js';
import { MessageTooLargeError, RuntimeError } from './errors.js';
import { checkAbortCause, invalidArgument, optionalBoolean, readOptions, requireBoolean, requireFunction } from './arguments.js';
import { describeHook, HOOK_NAMES, hookActor, HookRegistry, type AgentHooks, type HookName } from './hooks.js';
import { Inbox } from './inbox.js';
import { queueEdits } from './queue-edits.js';
import type { SessionLog } from './session-log.js';
import type { CommitCheck, EventObserver } from './session-log-types.js';
import { systemClock } from './ports/clock.js';
import { RequestRecord } from './request-record.js';
import { retryPolicy } from './retry-policy.js';
import { runTurn, type RunningPhase, type TurnPort } from './turn.js';
import type { LoopGate } from './loop-slices.js';
import type { AgentInbox, ChildEventType, DurableReceipt, InputOptions, QueueEdits, WakeOptions } from './agent-types.js';
import type { Logger } from './logger.js';
import type { Clock } from './ports/clock.js';
import type { ModelPort } from './ports/model.js';
import type { RetryPolicy } from './retry-policy.js';
import type { LateToolResults } from './tool-runner.js';
import type { Tool } from './tools.js';
import type { InboxState } from '../domain/inbox/inbox-state.js';
import * as E from 'fp-ts/lib/Either.js';
import type { SessionCreatedData } from '../domain/events.js';
import type { ResumeFacts } from '../domain/resume-facts.js';
import { stepSession, type SessionState } from '../domain/session-fold.js';

/** The actor of what steerlog does on its own: the cancel of `dispose`. */
const SYSTEM: Actor = Object.freeze({ id: 'steerlog', kind: 'system' });

/** How an Agent is built (by `Runtime.createSession`, `resume` and `fork`; not usually constructed directly). */
export interface AgentOptions {
  readonly log: SessionLog;
  readonly model: ModelPort;
  readonly tools?: readonly Tool<Agent>[];
  readonly logger: Logger;
  /** The system prompt, or a function assembling it at every proposed step (a throw ends the turn `error`). */
  readonly systemPrompt?: string | ((ctx: { readonly agent: Agent; readonly turn: number; readonly step: number; readonly signal: AbortSignal }) => string | Promise<string>);
  /** Parallel-safe tool calls run at most this many at once. @defaultValue 4 */
  readonly toolConcurrency?: number;
  /**
   * The outcome of a tool body that settles after the turn was aborted: `'withhold'` replaces it with an `ABORTED`
   * error result (the log keeps it under `meta.withheld`), `'keep'` commits it as returned. @defaultValue 'withhold'
   */
  readonly lateToolResults?: LateToolResults;
  /** The inbox state and last turn number restored from the log (resume). @defaultValue empty, 0 */
  readonly restored?: { readonly inbox: InboxState; readonly lastTurn: number; readonly window?: RestoredWindow };
  /** The actor of every input and control call that names none (`RuntimeOptions.actor`). @defaultValue none */
  readonly actor?: Actor;
  /** The default answer to a failed model request, and the wait between attempts. @defaultValue `retryPolicy()` */
  readonly retryPolicy?: RetryPolicy;
  /** Measures the time a step spends on its attempts. @defaultValue the system clock */
  readonly clock?: Clock;
  /** Called once the agent is disposed (the runtime forgets it). */
  readonly onDisposed?: () => void;
  /**
   * Where a turn waits, after each of its checkpoints (the claim's, the step's before its request), for its next
   * slice of the event loop (`LoopSlices`), so that the turns of many sessions do not all run in one turn of the
   * loop. To the outside the wait is part of the checkpoint's. @defaultValue none: a turn goes on at once
   */
  readonly turnGate?: LoopGate;
  /**
   * An agent resumed from a fold snapshot (`restored.window`): the most messages of the model's surface before its
   * window it keeps while idle. A longer surface, read from the store for a turn, is let go when the driver goes
   * idle and read again before the next model request (docs/store-jsonl.md, "what a live session holds").
   * @defaultValue {@link SURFACE_KEEP}
   */
  readonly surfaceKeep?: number;
}

/** The default {@link AgentOptions.surfaceKeep}: 20,000 messages (about 9 MiB of heap at the benchmarks' sizes). */
export const SURFACE_KEEP = 20_000;

/**
 * What an agent whose log was resumed from a fold snapshot (its log holds the events from `log.base` on) needs of
 * the events it does not hold: the session's header, the fold state after its log as loaded (closers included), the
 * request provenance facts, and a reader of the model's surface before the window (called before the first model
 * request, and again after a surface longer than {@link AgentOptions.surfaceKeep} was let go).
 */
export interface RestoredWindow {
  readonly header: SessionCreatedData;
  readonly state: SessionState;
  readonly facts: ResumeFacts;
  readonly surface: () => Promise<readonly ModelMessage[]>;
}

type Phase = { kind: 'idle'; lastTurn: number } | { kind: 'maintenance'; abort: AbortController; lastTurn: number; wakeRequested: boolean } | RunningPhase;

/**
 * An agent bound to one session stream. All input goes through the durable Inbox; the driver claims it at step
 * boundaries and runs turns and steps; every decision comes from the pure functions of domain/turn-machine.ts.
 */
export class Agent {
  readonly sessionId: string;
  readonly #log: SessionLog;
  readonly #hooks: HookRegistry<Agent>;
  readonly #opts: AgentOptions;
  readonly #inbox: Inbox<Agent>;
  #phase: Phase;
  #disposing = false;
  #disposed: Promise<void> | null = null;
  #activity: Promise<void> = Promise.resolve();
  #modelMessages: ModelMessage[] = [];
  /** The surface before the window, until it is read (an agent resumed from a fold snapshot). */
  #surfaceBefore: (() => Promise<readonly ModelMessage[]>) | null = null;
  #surfaceRead: Promise<void> | null = null;
  /** The restored window, and the log's length when it was restored (to fold what came after). */
  readonly #window: { readonly restored: RestoredWindow; readonly length: number } | null;
  /** The step provenance this agent writes before its requests (request/header, request/context). */
  readonly #requests = new RequestRecord();
  /** What each turn (and each model step in it) needs from this agent. */
  readonly #turnPort: TurnPort<Agent>;
  /** The provenance of the wake that opens the next turn (recorded on its `turn/start`), until that turn starts. */
  #wokenBy: EventMetadata | undefined;
  /** The provenance of the cancel that aborted the running turn (recorded on its `turn/end`), until it ends. */
  #stoppedBy: EventMetadata | undefined;

  constructor(sessionId: string, opts: AgentOptions) {
    this.sessionId = sessionId;
    this.#opts = opts;
    this.#log = opts.log;
    const tools = new Map((opts.tools ?? []).map((t) => [t.name, t]));
    // what a deciding listener's call sends, before or after its awaits, is the hook's (see #provenance)
    this.#hooks = new HookRegistry<Agent>(opts.logger, (name, call) => runInHook(this, name, call));
    this.#inbox = new Inbox(this.#log, this.#hooks, opts.restored?.inbox ?? initialInboxState(), () => this.#lastTurn());
    this.#phase = { kind: 'idle', lastTurn: opts.restored?.lastTurn ?? 0 };
    const window = opts.restored?.window;
    this.#window = window ? { restored: window, length: this.#log.length } : null;
    if (window) {
      this.#surfaceBefore = this.#log.base > 0 ? window.surface : null;
      this.#requests.seed(window.facts);
    }
    for (const e of this.#log.events) this.#track(e);
    this.#log.onEvent((e) => this.#track(e));
    this.#turnPort = {
      log: this.#log,
      model: opts.model,
      tools,
      agent: this,
      messages: () => this.#modelMessages,
      surfaceReady: () => this.#readSurface(),
      inbox: () => this.#inbox.state,
      stageContext: (message, metadata) => void this.#inbox.mutate({ kind: 'append', target: 'next-step', message }, metadata),
      toolConcurrency: opts.toolConcurrency ?? 4,
      gate: opts.turnGate,
      lateToolResults: opts.lateToolResults ?? 'withhold',
      hooks: this.#hooks,
      retryPolicy: opts.retryPolicy ?? retryPolicy(),
      requestErrorListeners: () => this.#hooks.decidingListeners('request-error'),
      now: () => (opts.clock ?? systemClock).now(),
      requests: this.#requests,
      // read at every proposed step, as the options were
      get systemPrompt() {
        return opts.systemPrompt;
      },
      takeWoken: () => {
        const m = this.#wokenBy;
        this.#wokenBy = undefined;
        return m;
      },
      takeStopped: () => {
        const m = this.#stoppedBy;
        this.#stoppedBy = undefined;
        return m;
      },
      claim: (target, metadata) => {
        const { removed, spliceId } = this.#inbox.splice({ kind: 'claim', target }, metadata);
        return { claimed: removed, spliceId };
      },
    };
    this.#log.onFence((e) => {
      const p = this.#phase;
      this.#hooks.emit('error', { turn: this.#lastTurn(), step: p.kind === 'running' ? p.step : 0, error: { message: e.message, code: e.code } });
    });
  }

  // ---- observation ---------------------------------------------------------------------------------------------

  get status(): 'idle' | 'running' {
    return publicStatus(this.#phase.kind);
  }
  /**
   * The live log held in memory, in order: every event, or for an agent resumed from a fold snapshot the events from
   * {@link base} on (`events[i].seq === base + i`; the earlier ones are durable in the store).
   */
  get events(): readonly LogEvent[] {
    return this.#log.events;
  }
  /** The seq of `events[0]`: 0 unless the agent was resumed from a fold snapshot. */
  get base(): number {
    return this.#log.base;
  }
  /** The number of events of the log (the next seq), held or not. */
  get length(): number {
    return this.#log.length;
  }
  /** The event at `seq` when it is held in memory, else undefined. */
  eventAt(seq: number): LogEvent | undefined {
    return this.#log.eventAt(seq);
  }
  /** The number of events known durable in the store. */
  get durableCount(): number {
    return this.#log.durableCount;
  }
  /** The session's `session/created` data. */
  get header(): SessionCreatedData {
    return this.#window?.restored.header ?? (this.#log.eventAt(0)!.data as SessionCreatedData);
  }
  /**
   * The session fold's state after the last event, for an agent resumed from a fold snapshot (the state it was
   * restored with, stepped over what was appended since: O(events since the resume)); undefined for an agent that
   * holds its whole log (fold `events`).
   */
  windowState(): SessionState | undefined {
    const w = this.#window;
    if (w === null) return undefined;
    let state = w.restored.state;
    for (let seq = w.length; seq < this.#log.length; seq++) {
      const step = stepSession(state, this.#log.eventAt(seq)!);
      if (E.isLeft(step)) throw step.left;
      state = step.right.state;
    }
    return state;
  }
  /** The session/event observer seam: called synchronously after each append (contained). */
  onEvent(observer: EventObserver): () => void {
    return this.#log.onEvent(requireFunction(observer, 'onEvent(observer)'));
  }
  /** A pre-commit check that may veto an append by throwing. */
  addCommitCheck(check: CommitCheck): () => void {
    return this.#log.addCommitCheck(requireFunction(check, 'addCommitCheck(check)'));
  }
  on<K extends HookName>(name: K, listener: AgentHooks<Agent>[K]): () => void {
    if (!HOOK_NAMES.includes(name)) throw invalidArgument('on(name)', `unknown hook ${describeHook(name)}`);
    return this.#hooks.on(name, requireFunction(listener, `on('${name}', listener)`));
  }
  /** Resolves when everything logged so far is durable in the store. */
  checkpoint(): Promise<void> {
    return this.#log.checkpoint();
  }
  /** Resolves when the latest driver (or maintenance) settles and no newer one replaced it. Not a per-message handle. */
  async whenIdle(): Promise<void> {
    for (;;) {
      const a = this.#activity;
      await a.catch(() => {});
      if (this.#activity === a) return;
    }
  }

  /**
   * Appends a child lifecycle event: `subagent/descriptor` to a child's own log, `subagent/start` / `subagent/end`
   * to a parent's log. Not an inbox change; the runtime's children manager is its only caller.
   */
  recordChildEvent<T extends ChildEventType>(type: T, data: EventDataByType[T]): void {
    this.#log.append(type, data);
  }

  /**
   * Appends a recorded inbox splice again, with its recorded provenance, and never wakes: how a replay re-admits a
   * recorded input, queue edit or cancel at its recorded point (`replayCheck`, `replaySession`). Decided like every
   * edit: a splice that does not fit the live inbox is refused (throws). Not for live input: use `send` and `queue`.
   */
  readmit(splice: InboxSplicedData, metadata?: EventMetadata): void {
    if (typeof splice !== 'object' || splice === null || !Array.isArray(splice.inserted)) throw invalidArgument('readmit(splice)', 'expected the data of an agent/inbox/spliced event');
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) throw invalidArgument('readmit(metadata)', 'expected a metadata object');
    const { target, start, removedCount, inserted } = splice;
    this.#inbox.mutate({ kind: 'splice', target, start, deleteCount: removedCount ?? 0, insert: inserted }, metadata);
  }

  /** The read-and-edit view of the Inbox. */
  get inbox(): AgentInbox {
    return this.#inbox.view();
  }

  // ---- input ---------------------------------------------------------------------------------------------------

  /**
   * Admits a message to the Inbox and, if `wake`, wakes the driver. Returns the message id: proof of admission only
   * (not of a claim, a reply or durability). A waking send after the active turn was aborted goes to next-turn.
   * On an idle agent the first turn/start and claim happen inside this call.
   */
  send(message: UserMessage, target: InboxTarget, wake: boolean, options: InputOptions = {}): MessageId {
    requireBoolean(wake, 'send(wake)');
    const phase = this.#phase;
    const wakingAfterAbort = wake && phase.kind !== 'idle' && phase.abort.signal.aborted;
    const effective: InboxTarget = wakingAfterAbort ? 'next-turn' : target;
    this.#inbox.mutate({ kind: 'append', target: effective, message }, this.#provenance(options, 'send(options)'));
    if (wake) this.#wakeDriver(wakingAfterAbort);
    return message.id;
  }
  /**
   * Runs parked work without a new message: wakes the driver if anything is pending (after a resume, a blocked or
   * failed turn, a keepInbox cancel); while a driver or maintenance is active, the pending work runs once it settles.
   * Returns whether there was anything to run. The `actor` (or `metadata`) is recorded on the `turn/start` of the
   * turn the wake runs. With `evenIfEmpty`, an idle agent starts a turn with nothing pending (see {@link WakeOptions}).
   */
  wake(options: WakeOptions = {}): boolean {
    const metadata = this.#provenance(options, 'wake(options)');
    const evenIfEmpty = optionalBoolean(readOptions(options, 'wake(options)', ['evenIfEmpty']).evenIfEmpty, 'wake(options).evenIfEmpty') ?? false;
    const pending = hasPending(this.#inbox.state) || (evenIfEmpty && this.#phase.kind === 'idle');
    if (!pending || this.#disposing) return false;
    this.#wokenBy = metadata;
    const p = this.#phase;
    // an explicit wake while a driver or maintenance is active: run whatever is still pending once it settles
    if (p.kind !== 'idle') p.wakeRequested = true;
    else this.#wakeDriver(false);
    return true;
  }
  /** A prompt for a later turn: send(message, 'next-turn', wake). */
  followup(message: UserMessage, options: InputOptions = {}): MessageId {
    return this.send(message, 'next-turn', true, options);
  }
  /** Input for the nearest step, waking the agent (an idle steer opens a turn). */
  steer(message: UserMessage, options: InputOptions = {}): MessageId {
    return this.send(message, 'next-step', true, options);
  }
  /** Input for the nearest step, without waking. */
  inject(message: UserMessage, options: InputOptions = {}): MessageId {
    return this.send(message, 'next-step', false, options);
  }

  /**
   * A durable receipt: admits the message like `send` and resolves only when its splice is durable in the store
   * (for deployments that must not acknowledge before that). Rejects if the write fails or the stream is fenced;
   * the message stays admitted in the live log either way.
   */
  async accept(message: UserMessage, options: InputOptions & { readonly target?: InboxTarget; readonly wake?: boolean } = {}): Promise<DurableReceipt> {
    const opts = readOptions(options, 'accept(options)', ['target', 'wake', 'metadata', 'actor']);
    const target = (opts.target ?? 'next-turn') as InboxTarget;
    const before = this.#log.events.length;
    const metadata = this.#provenance(opts, 'accept(options)');
    const messageId = this.send(message, target, optionalBoolean(opts.wake, 'accept(options).wake') ?? true, metadata ? { metadata } : {});
    const splice = this.#log.events.slice(before).find((e) => e.type === 'agent/inbox/spliced')!;
    await this.#log.checkpoint(splice.seq + 1);
    const placed = splice.data as { target: InboxTarget };
    return { messageId, seq: splice.seq, target: placed.target };
  }

  // ---- cancellation, disposal, maintenance ----------------------------------------------------------------------

  /**
   * Cancels in three layers (docs/protocol.md §9): unless `keepInbox`, pending input is durably canceled (next-step,
   * then next-turn) and the wake latch cleared — also when idle; the active turn or maintenance task is aborted with
   * `cause` (the first cause wins). Claimed input is never restored. An idle keepInbox cancel does nothing.
   */
  cancel(cause: AbortCause = { kind: 'user' }, options: InputOptions & { readonly keepInbox?: boolean } = {}): void {
    cause = checkAbortCause(cause, 'cancel(cause)');
    // the cause is recorded in `turn/end aborted`: one the store could not hold is refused now, never at the turn's end
    const closing = this.#log.measure('turn/end', { turn: this.#lastTurn() + 1, reason: { kind: 'aborted', reason: cause } });
    if (closing > this.#log.maxEventBytes) throw new MessageTooLargeError('turn/end', closing, this.#log.maxEventBytes);
    const opts = readOptions(options, 'cancel(options)', ['keepInbox', 'metadata', 'actor']);
    const keepInbox = optionalBoolean(opts.keepInbox, 'cancel(options).keepInbox');
    const metadata = this.#provenance(opts, 'cancel(options)');
    if (!keepInbox) {
      this.#inbox.mutate({ kind: 'clear' }, metadata);
      const p = this.#phase;
      if (p.kind !== 'idle') p.wakeRequested = false;
    }
    const p = this.#phase;
    if (p.kind !== 'idle' && !p.abort.signal.aborted) {
      // who stopped the turn: recorded on its turn/end (the first cancel wins, as its cause does)
      if (p.kind === 'running') this.#stoppedBy = metadata;
      p.abort.abort(cause);
    }
  }

  /**
   * Disposes the agent (memoized): a default cancel with cause `disposed` (clears pending input, aborts the active
   * turn, never latches), waits for idle, then drains the log to the store and closes it.
   */
  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      this.#disposing = true;
      try {
        this.cancel({ kind: 'disposed' }, { actor: SYSTEM });
      } catch (e) {
        this.#opts.logger.warn('cancel during dispose failed', e);
      }
      await this.whenIdle();
      try {
        await this.#log.close();
      } finally {
        this.#opts.onDisposed?.();
      }
    })();
    return this.#disposed;
  }

  /**
   * Runs a maintenance task while the agent reports idle (only from idle: throws `maintenance-unavailable` otherwise,
   * and `session-closed` once `dispose` was called). Waking sends during it are queued and latched, and run when the
   * task settles; `cancel` aborts the task's signal.
   */
  runMaintenance(task: (signal: AbortSignal) => Promise<void> | void): Promise<void> {
    requireFunction(task, 'runMaintenance(task)');
    if (this.#disposing) throw new RuntimeError('session-closed', `session ${this.sessionId} is disposed; maintenance cannot run`);
    const p = this.#phase;
    if (p.kind !== 'idle') throw new RuntimeError('maintenance-unavailable', 'maintenance runs only while the agent is idle');
    const abort = new AbortController();
    this.#setPhase({ kind: 'maintenance', abort, lastTurn: p.lastTurn, wakeRequested: false });
    const run = (async () => {
      try {
        await task(abort.signal);
      } finally {
        const m = this.#phase;
        if (m.kind === 'maintenance') {
          this.#setPhase({ kind: 'idle', lastTurn: m.lastTurn });
          if (m.wakeRequested && hasPending(this.#inbox.state) && !this.#disposing) this.#wakeDriver(false);
          else this.#wokenBy = undefined; // the wake ran nothing: no later turn is its
        }
      }
    })();
    this.#activity = run.catch(() => {});
    return run;
  }

  // ---- queue edits (docs/protocol.md §10): claim wins every race -------------------------------------------------------

  /** Queue edits by message id, with typed refusals instead of throws. */
  get queue(): QueueEdits {
    return queueEdits({
      inbox: this.#inbox,
      log: this.#log,
      status: () => this.status,
      steer: (message, metadata) => void this.steer(message, metadata ? { metadata } : {}),
      provenance: (options, where) => this.#provenance(options, where),
    });
  }

  /**
   * The metadata a call records: its own, with its actor — else, made inside a call of one of this agent's deciding
   * hooks' listeners (before or after its awaits), the hook (`hook:<name>`, kind `plugin`); else the runtime's default actor.
   */
  #provenance(options: unknown, where: string): EventMetadata | undefined {
    return provenance(readOptions(options, where, ['actor', 'metadata']), this.#hookActor() ?? this.#opts.actor, where);
  }
  /** The actor of the deciding hook whose listener's call the current code runs in (see hook-scope.ts), if any. */
  #hookActor(): Actor | undefined {
    const hook = currentHook(this);
    return hook === null ? undefined : hookActor(hook);
  }

  // ---- the log's surface messages ------------------------------------------------------------------------------

  /** Reads the surface before the window once (an agent resumed from a fold snapshot); resolves at once otherwise. */
  #readSurface(): Promise<void> {
    const before = this.#surfaceBefore;
    if (before === null) return Promise.resolve();
    this.#surfaceRead ??= before().then((messages) => {
      this.#modelMessages = messages.concat(this.#modelMessages);
      this.#surfaceBefore = null;
    });
    const read = this.#surfaceRead;
    // a failed read is tried again at the next request
    read.catch(() => {
      if (this.#surfaceRead === read) this.#surfaceRead = null;
    });
    return read;
  }

  /**
   * Idle, resumed from a snapshot, the surface before the window read: let go when it holds more than
   * `surfaceKeep` messages (the window's own messages stay; the rest is read from the store again when needed).
   */
  #releaseSurface(): void {
    const window = this.#window;
    if (window === null || this.#log.base === 0 || this.#surfaceBefore !== null) return;
    const keep = this.#opts.surfaceKeep ?? SURFACE_KEEP;
    if (this.#modelMessages.length <= keep) return;
    const held: ModelMessage[] = [];
    for (const e of this.#log.events) {
      const m = modelMessageOf(e);
      if (m) held.push(m);
    }
    if (this.#modelMessages.length - held.length <= keep) return;
    this.#modelMessages = held;
    this.#surfaceBefore = window.restored.surface;
    this.#surfaceRead = null;
  }

  #track(e: LogEvent): void {
    const m = modelMessageOf(e);
    if (m) this.#modelMessages.push(m);
    this.#requests.track(e);
  }

  // ---- phases --------------------------------------------------------------------------------------------------

  #lastTurn(): number {
    const p = this.#phase;
    return p.kind === 'running' ? p.turn : p.lastTurn;
  }

  #setPhase(next: Phase): void {
    const before = publicStatus(this.#phase.kind);
    this.#phase = next;
    const after = publicStatus(next.kind);
    if (before !== after) this.#hooks.emit('status', after);
  }

  #wakeDriver(afterAbort: boolean): void {
    const p = this.#phase;
    if (p.kind !== 'idle') {
      const cause = p.abort.signal.aborted ? (p.abort.signal.reason as AbortCause) : null;
      const retiring = p.kind === 'running' && p.retiring;
      if (!this.#disposing && latchesWake(p.kind, afterAbort || p.kind === 'maintenance' || retiring ? cause : null, retiring)) p.wakeRequested = true;
      return;
    }
    let done!: () => void;
    this.#activity = new Promise<void>((resolve) => (done = resolve));
    this.#setPhase({ kind: 'running', abort: new AbortController(), turn: p.lastTurn, step: 0, wakeRequested: false, retiring: false });
    // the driver is the runtime's own work, also when a listener's send woke it: no hook's call runs it
    void outsideHooks(() => this.#drive()).finally(done);
  }

  #running(): RunningPhase {
    const p = this.#phase;
    if (p.kind !== 'running') throw new Error('the driver is not running');
    return p;
  }

  /** The driver: turns while they say continue; then idle, and a latched wake if input is still pending. */
  async #drive(): Promise<void> {
    try {
      while (await runTurn(this.#turnPort, this.#running())) {
        /* next turn */
      }
    } catch {
      // already reported inside the turn
    } finally {
      const p = this.#phase;
      if (p.kind === 'running') {
        const { turn, wakeRequested } = p;
        this.#setPhase({ kind: 'idle', lastTurn: turn });
        this.#releaseSurface();
        if (wakeRequested && hasPending(this.#inbox.state) && !this.#disposing) this.#wakeDriver(false);
        else this.#wokenBy = undefined; // a wake whose work this driver took (or that ran nothing) names no later turn
      }
    }
  }
}
