import type { ChainHashFn } from '../domain/event-chain.js';
import type { EventMetadata } from '../domain/event-metadata.js';
import type { LogEvent, SessionCreatedData, SessionKind } from '../domain/events.js';
import type { InboxState } from '../domain/inbox/inbox-state.js';
import { initialInboxState } from '../domain/inbox/inbox-state.js';
import * as E from 'fp-ts/lib/Either.js';
import { foldSession, stepSession } from '../domain/session-fold.js';
import { Agent, type AgentOptions, type RestoredWindow } from './agent.js';
import { loadSessionWindow, readSurfaceBefore, type LoadedWindow } from './load-session-window.js';
import { LiveSnapshots, type FoldSnapshotOptions } from './live-snapshots.js';
import { isFoldSnapshotSource } from './ports/fold-snapshots.js';
import { RuntimeError } from './errors.js';
import { loadSession, repairClosers } from './load-session.js';
import { missedRunEnds } from './child-run-ends.js';
import { KeyedLock } from './keyed-lock.js';
import { isRunOpen } from '../domain/children/child-runs.js';
import type { SubagentEndData } from '../domain/children/subagent-events.js';
import { consoleLogger, type Logger } from './logger.js';
import type { SessionTelemetry } from './ports/telemetry.js';
import { dbSystemOf, operationErrorOf, storeOperationsOf } from './ports/store-operations.js';
import type { StoreAppendTiming } from './session-log-types.js';
import { sessionLogger } from './session-logger.js';
import { randomIds, systemClock, type Clock, type IdSource } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { HeadSigner } from './ports/head-signer.js';
import type { KeyStore } from './ports/key-store.js';
import type { ModelPort } from './ports/model.js';
import { SessionLog } from './session-log.js';
import type { LoopGate } from './loop-slices.js';
import { ContentSealer, type EncryptionOptions, type SealerSeed } from './content-sealer.js';
import type { LateToolResults } from './tool-runner.js';
import type { Tool } from './tools.js';
import { assertValidStreamId } from './ports/store-validation.js';
import { checkRetryOptions, noRetryPolicy, retryPolicy, type RetryPolicyOptions } from './retry-policy.js';
import { invalidArgument, optionalPositiveInteger, readOptions } from './arguments.js';
import { provenance, readActor, type ActorOption } from './provenance.js';

/** Options of {@link createRuntime}: the store, the model, the tools, and the injectable clock, ids and logger. */
export interface RuntimeOptions {
  /** Where session streams are kept. */
  readonly store: EventStore;
  readonly model: ModelPort;
  readonly tools?: readonly Tool<Agent>[];
  /** @defaultValue the system clock */
  readonly clock?: Clock;
  /** Event and session ids. @defaultValue random UUIDs */
  readonly ids?: IdSource;
  /** Where contained listener errors and background write failures are reported. @defaultValue console.warn */
  readonly logger?: Logger;
  /**
   * Where the sessions' telemetry goes (`createOtelTelemetry(…)` exports spans over OTLP): told each live session's
   * history, then every appended event. Refused with `encryption` when it captures content. @defaultValue none:
   * telemetry is off
   */
  readonly telemetry?: SessionTelemetry;
  /**
   * `resume` starts from the session's latest fold snapshot when the store keeps them (runtime/ports/fold-snapshots.ts):
   * the agent holds only its log from there on (`Agent.base`, `Agent.events`), and reads the model's surface before
   * it before its first model request (and again after letting a long one go: `surfaceKeep`). Not used with `encryption` or `telemetry`, nor for a session with
   * sub-agent events (those resume from the whole log). @defaultValue false: a resume holds the whole log
   */
  readonly resumeFromSnapshots?: boolean;
  /**
   * A session resumed from a fold snapshot keeps at most this many messages of the model's surface before its window
   * while idle: a longer surface, read for a turn, is let go when the turn ends and read from the store again before
   * the next model request (`AgentOptions.surfaceKeep`). @defaultValue 20000 (`SURFACE_KEEP`)
   */
  readonly surfaceKeep?: number;
  /**
   * Fold snapshots of live sessions (runtime/live-snapshots.ts): with a store that keeps fold snapshots
   * (runtime/ports/fold-snapshots.ts), each session's snapshots are taken in the background once its stored log
   * passes a checkpoint (every 512 events), so a host restarted after running a long session reads its history and
   * resumes it from the last one, never folding it from seq 0. Never blocks or fails an append or a turn; never with
   * `encryption`. `{ live: false }` leaves them to readers (a history page, a resume) as before.
   * @defaultValue `{ live: true, every: 512 }`
   */
  readonly foldSnapshots?: FoldSnapshotOptions;
  /** Write-behind window of every session (ms). @defaultValue 200 */
  readonly writeBatchDelayMs?: number;
  /**
   * Where every session's turn waits, after each of its checkpoints, for its next slice of the event loop
   * (`new LoopSlices()`: at most a few milliseconds of turn work per turn of the loop, first come first served), so a
   * process running many sessions keeps answering its requests and timers between their turns; `steerlog serve` uses
   * one. A session whose write-behind window expired waits for a slice too before it hands its batch to the store
   * (`SessionLogOptions.writeGate`), a turn whose model answered before it appends what follows, and a live fold
   * snapshot's catch-up between two slices of its fold. @defaultValue none: a turn goes on as soon as its checkpoint
   * resolves
   */
  readonly turnGate?: LoopGate;
  /** Parallel-safe tool calls at once. @defaultValue 4 */
  readonly toolConcurrency?: number;
  /** The hash chain's digest. @defaultValue SHA-256 over RFC 8785 JSON */
  readonly hashOf?: ChainHashFn;
  /** Signs a `chain/head` event at every full checkpoint of every session. @defaultValue none */
  readonly signer?: HeadSigner;
  /**
   * The outcome of a tool body that settles after its turn was aborted: `'withhold'` gives the model an `ABORTED`
   * error result instead (the log keeps the outcome under `meta.withheld`); `'keep'` commits it as returned.
   * @defaultValue 'withhold'
   */
  readonly lateToolResults?: LateToolResults;
  /**
   * Largest event a session logs, in bytes as the store measures it (`eventSizeBytes`). It can only lower the store's
   * own `maxEventBytes`. Input that would make a larger event is refused at admission (`message-too-large`).
   * @defaultValue the store's `maxEventBytes`
   */
  readonly maxEventBytes?: number;
  /**
   * Stores message content and tool payloads encrypted (AES-256-GCM) under per-session and per-actor data keys,
   * so that `steerlog erase` can destroy them without breaking the hash chain; resumed and forked sessions are
   * opened with the same keys. See docs/audit.md, Erasure. @defaultValue none: content is stored in clear
   */
  readonly encryption?: EncryptionOptions;
  /**
   * The actor of every input and control call that names none (no `actor` option and no `metadata.actor`):
   * `followup`, `steer`, `inject`, `send`, `accept`, queue edits, `cancel`, `wake`, `createSession` and `fork`
   * record it in their event's `metadata.actor` and `metadata.actorKind`. A string is the id of a `user`.
   * @defaultValue none: a call that names no actor records none
   */
  readonly actor?: ActorOption;
  /**
   * The default answer to a failed model request (docs/models.md): retry HTTP 408, 429 and 5xx, connection failures and cut
   * streams with exponential backoff and jitter, honouring the provider's retry-after, within `maxAttempts` and
   * `maxElapsedMs`. `false`: never retry unless a `request-error` listener answers retry. @defaultValue `{}` (the defaults)
   */
  readonly retry?: RetryPolicyOptions | false;
}

/** Options of `Runtime.createSession`: the session id (from the id source by default), its kind, its parent session and system prompt. */
export interface CreateSessionOptions {
  /** @defaultValue a fresh id from the runtime's id source */
  readonly sessionId?: string;
  /** @defaultValue 'ordinary' */
  readonly kind?: SessionKind;
  readonly parentSession?: string;
  /** Who made the session (`subagent` for a child a parent started). */
  readonly origin?: SessionCreatedData['origin'];
  /** A child's distance from its root session. */
  readonly delegationDepth?: number;
  readonly systemPrompt?: AgentOptions['systemPrompt'];
  /** Provenance of `session/created` (who opened the session, correlation). @defaultValue none */
  readonly metadata?: EventMetadata;
  /** Who opens (or forks) the session, recorded in `session/created`'s metadata. @defaultValue the runtime's `actor` */
  readonly actor?: ActorOption;
  /** This session's model, instead of the runtime's (a child's model route). @defaultValue the runtime's model */
  readonly model?: ModelPort;
  /** Only these of the runtime's tools are offered to this session (a child's tool filter). @defaultValue all of them */
  readonly toolNames?: readonly string[];
}

export interface ResumeOptions {
  readonly systemPrompt?: AgentOptions['systemPrompt'];
  /** As in `CreateSessionOptions`. @defaultValue the runtime's model */
  readonly model?: ModelPort;
  /** As in `CreateSessionOptions`. @defaultValue all of the runtime's tools */
  readonly toolNames?: readonly string[];
}

export interface ForkOptions extends CreateSessionOptions {
  /** Number of the parent's events the child inherits; must not fall inside an open turn. @defaultValue all of them */
  readonly boundary?: number;
}

/** Creates, resumes and forks sessions on one store with one model and one set of tools. */
export interface Runtime {
  readonly store: EventStore;
  /** The data keys sessions are sealed with (`RuntimeOptions.encryption`); null when content is stored in clear. */
  readonly keyStore: KeyStore | null;
  /** The largest event a session log admits: the store's `maxEventBytes`, or the lower `maxEventBytes` option. */
  readonly maxEventBytes: number;
  /** A new session stream (first event `session/created`) and the Agent bound to it. */
  createSession(options?: CreateSessionOptions): Agent;
  /**
   * Rebuilds an agent from the store alone: inbox (after the seed boundary), last turn number. A log whose tail turn
   * is open (a crash) is repaired by appending closers. A child's run the log never closed (the parent was gone when
   * the child settled, or both died with their host) is closed with a `subagent/end` derived from the child's own log,
   * unless the child is live here. Never wakes: parked work runs at the next waking send or `wake()`.
   */
  resume(sessionId: string, options?: ResumeOptions): Promise<Agent>;
  /**
   * Starts a child session seeded with the parent's events up to `boundary`, then `session/end-seed`. The child never
   * inherits pending input and continues the parent's turn numbers.
   */
  fork(parentSessionId: string, options?: ForkOptions): Promise<Agent>;
  /**
   * Forgets a live agent without disposing it (its host lost the session to another host; the store's optimistic
   * concurrency fences any write it still tries), so that a later `resume` of the id can run here again.
   */
  forget(sessionId: string): void;
  /** The live agent of a session in this runtime, or undefined: the registry the children's authorisation checks. */
  liveAgent(sessionId: string): Agent | undefined;
  /**
   * Logs the `subagent/end` of a child's run in its parent's log, unless that run is closed already: through the
   * parent's live agent when it is live here, otherwise through the store (the parent's log is opened without an
   * agent, the end appended at the revision it was read at, flushed). One at a time per session with `resume`, so a
   * parent being resumed either closes the run itself or is live when this runs. Resolves with how it was recorded;
   * rejects when the parent's log cannot be read or written (a `resume` of the parent closes the run later).
   */
  closeChildRun(parentSessionId: string, end: SubagentEndData): Promise<ChildRunClosing>;
  /**
   * Resolves once no background fold-snapshot catch-up of a live session is in flight (`RuntimeOptions.foldSnapshots`):
   * what a host awaits before it closes its store, and tests before they read the snapshots.
   */
  foldSnapshotsSettled(): Promise<void>;
}

/** How `Runtime.closeChildRun` recorded a run's end: in the live parent, through the store, or not at all (it was closed). */
export type ChildRunClosing = 'live' | 'stored' | 'closed-already';

/** The effectful shell: binds the pure core to a store, a model, tools, a clock and an id source. */
export const createRuntime = (given: RuntimeOptions): Runtime => {
  const options = checkRuntimeOptions(given);
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? consoleLogger;
  const defaultActor = readActor(options.actor, 'createRuntime(options).actor');
  const policy = options.retry === false ? noRetryPolicy() : retryPolicy(options.retry ?? {});
  /** Sessions with a live agent in this runtime (a live session cannot be resumed). */
  const live = new Map<string, Agent>();
  /** Opening a session (`resume`) and closing a child's run in a parent that is not live run one at a time per session. */
  const opening = new KeyedLock();

  const encryption = options.encryption;
  const keys = encryption?.keys ?? null;
  const telemetry = options.telemetry;
  if (telemetry?.capturesContent === true && encryption) {
    throw invalidArgument('createRuntime(options).telemetry', 'captures message content, and this runtime encrypts it: sealed content is never exported in plaintext');
  }
  /** A telemetry call, contained: a failing exporter is logged, never a failed append. */
  const contained = (call: () => void): void => {
    try {
      call();
    } catch (e) {
      logger.warn('telemetry failed (contained)', e);
    }
  };
  // store operations for the telemetry's db.* spans: every append of the write-behind, and the store's own fsync batches
  const storeOperation = telemetry?.storeOperation?.bind(telemetry);
  const dbSystem = dbSystemOf(options.store);
  const onAppend = storeOperation
    ? (a: StoreAppendTiming): void =>
        contained(() =>
          storeOperation({
            operation: 'append',
            system: dbSystem,
            collection: a.stream,
            startTime: a.startTime,
            endTime: a.endTime,
            events: a.events,
            firstSeq: a.firstSeq,
            ...(a.error !== undefined ? { error: operationErrorOf(a.error) } : {}),
          }),
        )
    : undefined;
  if (storeOperation) storeOperationsOf(options.store)?.onOperation((op) => contained(() => storeOperation(op)));
  // live checkpoints: told of every append that stored events (never with sealed content); their folds read the
  // events the live agents hold
  const liveSnapshots =
    options.foldSnapshots?.live !== false && keys === null && isFoldSnapshotSource(options.store) ? new LiveSnapshots(options.store, logger, options.foldSnapshots?.every, (stream, seq) => live.get(stream)?.eventAt(seq), options.turnGate)
      : undefined;
  const onStored = (a: StoreAppendTiming): void => {
    onAppend?.(a);
    if (a.error === undefined) liveSnapshots?.committed(a.stream, a.firstSeq + a.events);
  };
  const newLog = (stream: string, initial: readonly LogEvent[] = [], seed?: SealerSeed, from?: { readonly base: number; readonly head: string }) =>
    new SessionLog({
      ...(from ? { initialBase: from.base, initialHead: from.head } : {}),
      store: options.store,
      stream,
      clock,
      ids,
      logger: sessionLogger(logger, stream),
      initial,
      ...(options.writeBatchDelayMs !== undefined ? { writeBatchDelayMs: options.writeBatchDelayMs } : {}),
      ...(options.turnGate !== undefined ? { writeGate: options.turnGate } : {}),
      ...(options.hashOf ? { hashOf: options.hashOf } : {}),
      ...(options.signer ? { signer: options.signer } : {}),
      ...(options.maxEventBytes !== undefined ? { maxEventBytes: options.maxEventBytes } : {}),
      ...(encryption ? { sealer: new ContentSealer(stream, encryption, seed) } : {}),
      ...(onAppend || liveSnapshots ? { onAppend: onStored } : {}),
    });

  const bind = (sessionId: string, log: SessionLog, restored: { inbox: InboxState; lastTurn: number; window?: RestoredWindow }, setup: ResumeOptions = {}): Agent => {
    if (live.has(sessionId)) throw new RuntimeError('session-live', `session ${sessionId} already has a live agent in this runtime`);
    const { systemPrompt, toolNames } = setup;
    const tools = toolNames && options.tools ? options.tools.filter((t) => toolNames.includes(t.name)) : options.tools;
    const agent = new Agent(sessionId, {
      log,
      model: setup.model ?? options.model,
      logger: sessionLogger(logger, sessionId),
      restored,
      ...(tools ? { tools } : {}),
      ...(options.toolConcurrency !== undefined ? { toolConcurrency: options.toolConcurrency } : {}),
      ...(options.lateToolResults !== undefined ? { lateToolResults: options.lateToolResults } : {}),
      ...(options.turnGate !== undefined ? { turnGate: options.turnGate } : {}),
      ...(options.surfaceKeep !== undefined ? { surfaceKeep: options.surfaceKeep } : {}),
      retryPolicy: policy,
      clock,
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      ...(defaultActor !== undefined ? { actor: defaultActor } : {}),
      onDisposed: () => {
        if (live.get(sessionId) === agent) live.delete(sessionId);
        liveSnapshots?.forget(sessionId);
        if (telemetry) contained(() => telemetry.forget(sessionId));
      },
    });
    live.set(sessionId, agent);
    if (telemetry) {
      contained(() => telemetry.follow(sessionId, log.events));
      // contained like every telemetry call (no closure per event: this runs for every event of every live session)
      agent.onEvent((event) => {
        try {
          telemetry.observe(sessionId, event, log.dataJsonOf(event.seq));
        } catch (e) {
          logger.warn('telemetry failed (contained)', e);
        }
      });
    }
    return agent;
  };

  /** A resume from a fold snapshot: the log from the window on, its closers appended, and what the agent restores. */
  const resumedWindow = (sessionId: string, window: LoadedWindow): [SessionLog, { inbox: InboxState; lastTurn: number; window: RestoredWindow }] => {
    const log = newLog(sessionId, window.events, undefined, { base: window.base, head: window.head });
    const closers = repairClosers(window.events, window.state);
    if (closers.length > 0) {
      const time = window.events.at(-1)!.time;
      for (const closer of closers) log.append(closer.type, closer.data as never, { time });
    }
    let state = window.state;
    for (let seq = state.nextSeq; seq < log.length; seq++) {
      const step = stepSession(state, log.eventAt(seq)!);
      if (E.isLeft(step)) throw new RuntimeError('session-corrupt', `session ${sessionId}: ${step.left.message}`, { cause: step.left });
      state = step.right.state;
    }
    const surface = () => readSurfaceBefore(options.store, sessionId, window.base);
    return [log, { inbox: window.state.inbox, lastTurn: window.state.turns.lastTurn, window: { header: window.header, state, facts: window.facts, surface } }];
  };

  const created = (sessionId: string, opts: CreateSessionOptions, seedLength?: number) => ({
    sessionId,
    createdAt: clock.now(),
    kind: opts.kind ?? ('ordinary' as const),
    ...(opts.parentSession ? { parentSession: opts.parentSession } : {}),
    ...(seedLength !== undefined ? { seedLength } : {}),
    ...(opts.origin !== undefined ? { origin: opts.origin } : {}),
    ...(opts.delegationDepth !== undefined ? { delegationDepth: opts.delegationDepth } : {}),
  });

  return {
    store: options.store,
    keyStore: keys,
    maxEventBytes: Math.min(options.store.maxEventBytes, options.maxEventBytes ?? Number.POSITIVE_INFINITY),

    liveAgent: (sessionId) => live.get(sessionId),

    foldSnapshotsSettled: async () => liveSnapshots?.settled(),

    createSession(given) {
      const opts = sessionOptions(given, 'createSession(options)');
      const sessionId = opts.sessionId ?? ids.next();
      if (live.has(sessionId)) throw new RuntimeError('session-live', `session ${sessionId} already has a live agent in this runtime`);
      const log = newLog(sessionId);
      const metadata = provenance(opts, defaultActor, 'createSession(options)');
      log.append('session/created', created(sessionId, opts), metadata ? { metadata } : {});
      return bind(sessionId, log, { inbox: initialInboxState(), lastTurn: 0 }, opts);
    },

    async resume(sessionId, given) {
      assertValidStreamId(sessionId);
      const opts = sessionOptions(given, 'resume(options)');
      if (live.has(sessionId)) throw new RuntimeError('session-live', `session ${sessionId} is live in this runtime; it cannot be resumed`);
      return opening.run(sessionId, async () => {
        // again under the lock: a resume that waited behind another one of the same session must not build a
        // second log (its closers and run ends would reach the store through its write-behind, fencing the winner)
        if (live.has(sessionId)) throw new RuntimeError('session-live', `session ${sessionId} is live in this runtime; it cannot be resumed`);
        const window = options.resumeFromSnapshots === true && keys === null && !telemetry ? await loadSessionWindow(options.store, sessionId) : undefined;
        if (window) return bind(sessionId, ...resumedWindow(sessionId, window), opts);
        // an erased session resumes: what its keys sealed reads `[erased]` (queued input too, and the model sees that)
        const { events, state, seed } = await loadSession(options.store, sessionId, keys);
        const ends = await missedRunEnds(options.store, keys, events, (id) => live.has(id), logger);
        const log = newLog(sessionId, events, seed);
        const time = events.at(-1)!.time;
        for (const closer of repairClosers(events, state)) log.append(closer.type, closer.data as never, { time });
        for (const end of ends) log.append('subagent/end', end);
        return bind(sessionId, log, { inbox: state.inbox, lastTurn: state.turns.lastTurn }, opts);
      });
    },

    closeChildRun(parentSessionId, end) {
      return opening.run(parentSessionId, async (): Promise<ChildRunClosing> => {
        const parent = live.get(parentSessionId);
        if (parent) {
          if (!isRunOpen(parent.events, end.runId)) return 'closed-already';
          parent.recordChildEvent('subagent/end', end);
          return 'live';
        }
        const { events, seed } = await loadSession(options.store, parentSessionId, keys);
        if (!isRunOpen(events, end.runId)) return 'closed-already';
        const log = newLog(parentSessionId, events, seed);
        log.append('subagent/end', end);
        await log.close();
        return 'stored';
      });
    },

    forget(sessionId) {
      live.delete(sessionId);
    },

    async fork(parentSessionId, given) {
      assertValidStreamId(parentSessionId);
      const opts = forkOptions(given);
      const parent = await loadSession(options.store, parentSessionId, keys);
      const boundary = opts.boundary ?? parent.events.length;
      if (!Number.isSafeInteger(boundary) || boundary < 1 || boundary > parent.events.length) {
        throw new RuntimeError('invalid-fork-boundary', `boundary ${boundary} is outside the parent's ${parent.events.length} events`);
      }
      const seed = parent.events.slice(0, boundary);
      const folded = foldSession(seed);
      if (folded.state.turns.openTurn) {
        throw new RuntimeError('invalid-fork-boundary', `boundary ${boundary} falls inside turn ${folded.state.turns.openTurn.turn} of ${parentSessionId}`);
      }
      const sessionId = opts.sessionId ?? ids.next();
      if (live.has(sessionId)) throw new RuntimeError('session-live', `session ${sessionId} already has a live agent in this runtime`);
      const log = newLog(sessionId);
      // the child is caused by the parent's last inherited event; seed events keep their own provenance
      try {
        log.append('session/created', created(sessionId, { ...opts, parentSession: parentSessionId }, boundary), {
          metadata: { ...provenance(opts, defaultActor, 'fork(options)'), causationId: seed.at(-1)!.id },
        });
        for (const e of seed) {
          log.appendAny(e.type, e.data, { time: e.time, ...(e.ignorable ? { ignorable: true as const } : {}), ...(e.metadata ? { metadata: e.metadata } : {}) });
        }
        log.append('session/end-seed', {});
      } catch (e) {
        // a seed event this runtime cannot log (larger than its limit): the child is never written, not half-seeded
        log.abandon();
        throw e;
      }
      return bind(sessionId, log, { inbox: initialInboxState(), lastTurn: folded.state.turns.lastTurn }, opts);
    },
  };
};

const SESSION_KINDS: readonly unknown[] = ['ordinary', 'continuable', 'one-shot'];
const ORIGINS: readonly unknown[] = ['user', 'fork', 'subagent'];
const hasMethod = (value: unknown, method: string): boolean =>
  typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[method] === 'function';

/** Session options, read once and checked: ids by the stores' own rule (`invalid-stream-id`), the rest `invalid-argument`. */
const sessionOptions = (given: unknown, where: string): CreateSessionOptions => {
  const o = readOptions(given, where, ['sessionId', 'kind', 'parentSession', 'origin', 'delegationDepth', 'systemPrompt', 'model', 'toolNames', 'metadata', 'actor']);
  if (o.metadata !== undefined && (typeof o.metadata !== 'object' || o.metadata === null || Array.isArray(o.metadata))) {
    throw invalidArgument(`${where}.metadata`, 'expected a metadata object');
  }
  if (o.sessionId !== undefined) assertValidStreamId(o.sessionId);
  if (o.parentSession !== undefined) assertValidStreamId(o.parentSession);
  if (o.kind !== undefined && !SESSION_KINDS.includes(o.kind)) throw invalidArgument(`${where}.kind`, `expected one of ${SESSION_KINDS.join(', ')}`);
  if (o.origin !== undefined && !ORIGINS.includes(o.origin)) throw invalidArgument(`${where}.origin`, `expected one of ${ORIGINS.join(', ')}`);
  optionalPositiveInteger(o.delegationDepth, `${where}.delegationDepth`);
  if (o.systemPrompt !== undefined && typeof o.systemPrompt !== 'string' && typeof o.systemPrompt !== 'function') {
    throw invalidArgument(`${where}.systemPrompt`, 'expected a string or a function');
  }
  if (o.model !== undefined && !hasMethod(o.model, 'complete')) throw invalidArgument(`${where}.model`, 'expected a ModelPort');
  if (o.toolNames !== undefined && !(Array.isArray(o.toolNames) && o.toolNames.every((n) => typeof n === 'string'))) {
    throw invalidArgument(`${where}.toolNames`, 'expected an array of tool names');
  }
  return o as CreateSessionOptions;
};

const forkOptions = (given: unknown): ForkOptions => {
  const o = sessionOptions(given, 'fork(options)');
  const { boundary } = readOptions(given, 'fork(options)', ['boundary']);
  if (boundary !== undefined && typeof boundary !== 'number') throw invalidArgument('fork(options).boundary', 'expected a number');
  return { ...o, ...(boundary !== undefined ? { boundary } : {}) } as ForkOptions;
};

/** The runtime's options, read once and checked (`invalid-argument` naming the option). */
const checkRuntimeOptions = (given: RuntimeOptions): RuntimeOptions => {
  const where = 'createRuntime(options)';
  const o = readOptions(given, where, ['store', 'model', 'tools', 'clock', 'ids', 'logger', 'writeBatchDelayMs', 'toolConcurrency', 'lateToolResults', 'maxEventBytes', 'hashOf', 'signer', 'encryption', 'actor', 'retry', 'telemetry', 'resumeFromSnapshots', 'surfaceKeep', 'turnGate', 'foldSnapshots']);
  if (o.hashOf !== undefined && typeof o.hashOf !== 'function') throw invalidArgument(`${where}.hashOf`, 'expected a chain hash function');
  if (o.signer !== undefined && !(hasMethod(o.signer, 'sign') && typeof (o.signer as { keyId?: unknown }).keyId === 'string')) {
    throw invalidArgument(`${where}.signer`, 'expected a HeadSigner (keyId and sign)');
  }
  if (o.encryption !== undefined) {
    const enc = o.encryption as Partial<EncryptionOptions> | null;
    if (typeof enc !== 'object' || enc === null || !['put', 'get', 'destroy'].every((m) => hasMethod(enc.keys, m))) {
      throw invalidArgument(`${where}.encryption`, 'expected { keys: KeyStore }');
    }
    if (enc.perActor !== undefined && typeof enc.perActor !== 'boolean') throw invalidArgument(`${where}.encryption.perActor`, 'expected a boolean');
    if (enc.newKeyId !== undefined && typeof enc.newKeyId !== 'function') throw invalidArgument(`${where}.encryption.newKeyId`, 'expected a function');
  }
  const store = o.store as Partial<EventStore> | undefined;
  if (typeof store !== 'object' || store === null || typeof store.append !== 'function' || typeof store.read !== 'function') {
    throw invalidArgument(`${where}.store`, 'expected an EventStore');
  }
  if (typeof store.maxEventBytes !== 'number' || !(store.maxEventBytes > 0)) {
    throw invalidArgument(`${where}.store`, 'the store does not say its maxEventBytes (every EventStore must)');
  }
  if (!hasMethod(o.model, 'complete')) throw invalidArgument(`${where}.model`, 'expected a ModelPort');
  if (o.clock !== undefined && !hasMethod(o.clock, 'now')) throw invalidArgument(`${where}.clock`, 'expected a Clock');
  if (o.ids !== undefined && !hasMethod(o.ids, 'next')) throw invalidArgument(`${where}.ids`, 'expected an IdSource');
  if (o.logger !== undefined && !hasMethod(o.logger, 'warn')) throw invalidArgument(`${where}.logger`, 'expected a Logger');
  if (o.telemetry !== undefined && !(hasMethod(o.telemetry, 'follow') && hasMethod(o.telemetry, 'observe') && hasMethod(o.telemetry, 'forget'))) {
    throw invalidArgument(`${where}.telemetry`, 'expected a SessionTelemetry (follow, observe, forget)');
  }
  if (o.tools !== undefined && (!Array.isArray(o.tools) || !o.tools.every((t) => hasMethod(t, 'execute') && typeof (t as Tool).name === 'string'))) {
    throw invalidArgument(`${where}.tools`, 'expected an array of tools (name and execute)');
  }
  if (o.writeBatchDelayMs !== undefined && !(typeof o.writeBatchDelayMs === 'number' && o.writeBatchDelayMs >= 0 && Number.isFinite(o.writeBatchDelayMs))) {
    throw invalidArgument(`${where}.writeBatchDelayMs`, 'expected a number of milliseconds >= 0');
  }
  if (o.lateToolResults !== undefined && o.lateToolResults !== 'withhold' && o.lateToolResults !== 'keep') {
    throw invalidArgument(`${where}.lateToolResults`, "expected 'withhold' or 'keep'");
  }
  if (o.retry !== undefined && o.retry !== false) checkRetryOptions(o.retry, `${where}.retry`);
  if (o.turnGate !== undefined && !hasMethod(o.turnGate, 'next')) throw invalidArgument(`${where}.turnGate`, 'expected a LoopGate (next)');
  if (o.resumeFromSnapshots !== undefined && typeof o.resumeFromSnapshots !== 'boolean') throw invalidArgument(`${where}.resumeFromSnapshots`, 'expected a boolean');
  if (o.surfaceKeep !== undefined && !(Number.isSafeInteger(o.surfaceKeep) && (o.surfaceKeep as number) >= 0)) throw invalidArgument(`${where}.surfaceKeep`, 'expected an integer >= 0');
  if (o.foldSnapshots !== undefined) {
    const f = readOptions(o.foldSnapshots, `${where}.foldSnapshots`, ['live', 'every']);
    if (f.live !== undefined && typeof f.live !== 'boolean') throw invalidArgument(`${where}.foldSnapshots.live`, 'expected a boolean');
    optionalPositiveInteger(f.every, `${where}.foldSnapshots.every`);
  }
  optionalPositiveInteger(o.toolConcurrency, `${where}.toolConcurrency`);
  optionalPositiveInteger(o.maxEventBytes, `${where}.maxEventBytes`);
  return o as RuntimeOptions;
};
