import { isKnownEvent, type InboxSplicedData, type LogEvent } from '../../domain/events.js';
import type { Agent, AgentOptions } from '../../runtime/agent.js';
import { retry } from '../../runtime/hooks.js';
import { silentLogger } from '../../runtime/logger.js';
import type { EventStore, NewEvent } from '../../runtime/ports/event-store.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { LateToolResults } from '../../runtime/tool-runner.js';
import type { ToolSpec } from '../../runtime/ports/model.js';
import type { Tool } from '../../runtime/tools.js';
import { MemoryEventStore } from '../store/memory/memory-event-store.js';
import { gatedStore } from './gated-store.js';
import { divergenceFinder, type ReplayDivergence } from './event-compare.js';
import { readRecordedLog, type RecordedLog } from './recorded-log.js';
import { recordedModel, recordedTools, type Pending } from './recorded-ports.js';
import { actFor, backoffAsRecorded, isOutsideInput, withoutCause, type RecordedScene } from './recorded-actions.js';
import { resumePoints } from './recorded-resumes.js';
import { absorbResentInputs, noteReadmitted } from './resent-inputs.js';
import { failedRequestCheckpoints, failedTurnCheckpoints, recordedFailures } from './recorded-failures.js';

/**
 * The replay check (`steerlog replay --check`, `replayCheck`): today's runtime re-driven with a recorded session's
 * model answers, tool outcomes, retry decisions, clock and ids, its recorded inputs re-admitted at the points they
 * were recorded at, and the events it produces compared with the recorded ones as they are produced — the way a
 * Temporal user replays workflow histories against new workflow code before deploying it.
 */

/** Options of {@link replayCheck}: the deployment's code to check against the recording. */
export interface ReplayCheckOptions {
  /**
   * Installs the deployment's hooks and plugins on the replaying agent (`agent.on('pre-step', …)`, …), as the
   * deployment does on its own agents. @defaultValue none
   */
  readonly install?: (agent: Agent) => void;
  /** The system prompt; a function is called at every proposed step. @defaultValue the one each step recorded */
  readonly systemPrompt?: AgentOptions['systemPrompt'];
  /**
   * Tools whose code runs in the replay instead of answering from the recorded outcomes (a deployment checking a
   * changed tool); the recording's other tools are still answered from it. @defaultValue none: every call is answered
   * from its recorded outcome
   */
  readonly tools?: readonly Tool<Agent>[];
  /** As `RuntimeOptions.toolConcurrency`. @defaultValue 4 */
  readonly toolConcurrency?: number;
  /** As `RuntimeOptions.lateToolResults`. @defaultValue 'withhold' */
  readonly lateToolResults?: LateToolResults;
}

/** What a replay check found: the recording reproduced event for event, or the first event that differs. */
export type ReplayCheckResult =
  | { readonly ok: true; readonly events: number }
  | { readonly ok: false; readonly events: number; readonly divergence: ReplayDivergence };

/** One macrotask turn: what the runtime does without waiting on the replay happens meanwhile. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(() => setTimeout(resolve, 0)));

/**
 * Re-drives the runtime with a recorded log and compares what it produces, event by event. A log the runtime cannot
 * re-drive (sealed content whose key is not at hand, erased content, unknown event types) is refused with `NotReplayableError`.
 * A log without step provenance (written before the runtime recorded `request/header` and `request/context`) is
 * compared without the ones today's runtime writes; signed chain heads (`chain/head`) are not compared.
 */
export const replayCheck = async (events: readonly LogEvent[], options: ReplayCheckOptions = {}): Promise<ReplayCheckResult> => {
  const log = readRecordedLog(events);
  return drive(log, options);
};

const drive = async (log: RecordedLog, options: ReplayCheckOptions): Promise<ReplayCheckResult> => {
  // a signed chain head needs the signer's key: the replay writes none, and compares the log without them
  const recorded = log.events.filter((e) => e.type !== 'chain/head');
  const provenanceRecorded = recorded.some((e) => e.type === 'request/header');
  const metadataRecorded = recorded.some((e) => e.metadata !== undefined);
  const kept = (e: LogEvent): boolean => provenanceRecorded || (e.type !== 'request/header' && e.type !== 'request/context');
  const resumes = resumePoints(recorded);
  const failures = recordedFailures(recorded);
  // the failed checkpoints before a model request and before a turn's first pre-step: the write that ends with this event fails
  const requestCheckpoints = [...failedRequestCheckpoints(recorded), ...failedTurnCheckpoints(recorded)];
  /** The agent writing the session now (null while the replay resumes it). */
  let current: Agent | null = null;
  /** How many compared events the runtime has produced: the position of the next one. */
  let position = 0;
  /** While a resume appends its closers: the position of the next one. */
  let resuming: number | null = null;
  let createdRead = false;
  const usedIds = new Set<string>();
  const at = (): LogEvent => recorded[Math.min(resuming ?? position, recorded.length - 1)]!;
  const pending: Pending = { request: null, calls: new Map() };
  const created = log.created;
  const sessionId = created.sessionId;
  const runtimeOn = (store: EventStore, tools: readonly ToolSpec[]) =>
    createRuntime({
      store,
      model: recordedModel(log, () => position, pending),
      tools: recordedTools(tools, log, pending, options.tools ?? []),
      clock: {
        now: () => {
          if (!createdRead) {
            createdRead = true;
            return log.created.createdAt;
          }
          return at().time;
        },
      },
      ids: {
        next: () => {
          const id = at().id;
          if (resuming !== null) resuming++;
          // an id the replay already gave (a runtime dropped at a resume went past the point): a new one, as valid
          const fresh = usedIds.has(id) ? globalThis.crypto.randomUUID() : id;
          usedIds.add(fresh);
          return fresh;
        },
      },
      logger: silentLogger,
      writeBatchDelayMs: 0,
      retry: { sleep: (_ms, signal) => backoffAsRecorded(scene, live, position, signal) },
      ...(options.toolConcurrency !== undefined ? { toolConcurrency: options.toolConcurrency } : {}),
      ...(options.lateToolResults !== undefined ? { lateToolResults: options.lateToolResults } : {}),
    });
  const memory = new MemoryEventStore();
  let gate = gatedStore(memory);
  let offered = log.tools;
  const runtime = runtimeOn(gate.store, offered);
  const first = recorded[0]!;
  // a step that recorded no system prompt is asked with none (the runtime leaves an undefined one out of the header)
  const systemPrompt = options.systemPrompt ?? (({ turn, step }: { turn: number; step: number }) => log.systemOf(turn, step) as string);
  const setup = {
    sessionId,
    ...(created.kind !== 'ordinary' ? { kind: created.kind } : {}),
    ...(created.origin !== undefined ? { origin: created.origin } : {}),
    ...(created.delegationDepth !== undefined ? { delegationDepth: created.delegationDepth } : {}),
    systemPrompt,
  };
  let live: Agent;
  if (created.seedLength !== undefined && created.parentSession !== undefined) {
    // a fork: its seed is the origin's first events; the origin's last one is the fork's cause
    const seed = recorded.slice(1, 1 + created.seedLength);
    const cause = first.metadata?.causationId;
    await memory.append(
      created.parentSession,
      seed.map((e, i) => envelopeOf(e, i === seed.length - 1 && cause !== undefined ? cause : globalThis.crypto.randomUUID())),
      'no_stream',
    );
    live = await runtime.fork(created.parentSession, { ...setup, boundary: seed.length, metadata: withoutCause(first.metadata) });
  } else {
    live = runtime.createSession({
      ...setup,
      ...(created.parentSession !== undefined ? { parentSession: created.parentSession } : {}),
      ...(first.metadata ? { metadata: first.metadata } : {}),
    });
  }
  const scene: RecordedScene = { log, recorded, metadataRecorded, pending, readmitted: { row: [] }, settledAhead: new Set<string>() };
  /** Follows a new agent: the position of the next event, the deployment's hooks, the recorded retry decisions. */
  const follow = (agent: Agent): void => {
    current = agent;
    position = agent.events.filter(kept).length;
    agent.onEvent((e) => {
      if (agent !== current || !kept(e)) return;
      position++;
      if (e.type === 'step/end') scene.settledAhead.clear(); // call ids are a step's own
      const checkpointFailure = requestCheckpoints.find((f) => f.eventId === e.id);
      if (checkpointFailure) gate.failWith(e.id, checkpointFailure.error);
      if (e.type === 'tool/call') {
        // the recorded failure of the checkpoint before this call's body: the store's write of this call fails as it did
        const d = e.data as { turn: number; step: number; callId: string };
        const f = failures.find((x) => x.write === 'checkpoint' && x.turn === d.turn && x.step === d.step && x.callId === d.callId);
        if (f) {
          failures.splice(failures.indexOf(f), 1);
          gate.failWith(e.id, f.error);
        }
      }
      // an input recorded right after a turn's end arrived before the driver went on to its next turn, which it does
      // without waiting on anything the replay answers: it is re-admitted at once, before the driver's next step
      if (e.type === 'turn/end' && isOutsideInput(scene, recorded[position], position)) queueMicrotask(() => readmitHere(agent));
    });
    absorbResentInputs(agent, scene.readmitted);
    // An input recorded right after what a deciding hook's listeners sent arrived while they ran (the runtime waits on
    // them); the runtime's next write follows them without a wait the replay holds. It is re-admitted once the
    // deployment's listeners are done: the pre-step waterfall's outermost stage (registered before theirs) after the
    // inner decision, and a turn-stopping listener after theirs.
    agent.on('pre-step', async (_ctx, next) => {
      const decision = await next();
      readmitHere(agent);
      return decision;
    });
    // the recorded refusals of a tool result's write, once each
    agent.addCommitCheck((type, data) => {
      if (type !== 'tool/result') return;
      const d = data as { turn: number; step: number; message: { callId: string } };
      const f = failures.find((x) => x.write === 'result' && x.turn === d.turn && x.step === d.step && x.callId === d.message.callId);
      if (!f) return;
      failures.splice(failures.indexOf(f), 1);
      throw f.error;
    });
    options.install?.(agent);
    agent.on('turn-stopping', () => readmitHere(agent));
    // the recorded retry decisions, innermost after the deployment's own request-error listeners
    agent.on('request-error', (ctx) => {
      const next = recorded[position];
      if (next?.type !== 'request/error' || !isKnownEvent(next)) return undefined;
      const d = next.data as { turn: number; step: number; attempt: number; retryInMs?: number };
      return d.turn === ctx.turn && d.step === ctx.step && d.attempt === ctx.attempt && d.retryInMs !== undefined ? retry(d.retryInMs) : undefined;
    });
  };
  /** Re-admits the inputs recorded from the current position on, in one go (the next one not an input ends it). */
  const readmitHere = (agent: Agent): void => {
    for (let next = recorded[position]; agent === current && isOutsideInput(scene, next, position); next = recorded[position]) {
      const before = position;
      try {
        const before = agent.events.at(-1);
        agent.readmit(next.data as InboxSplicedData, next.metadata);
        noteReadmitted(scene.readmitted, before, agent.events.at(-1));
      } catch {
        return; // it does not fit: the comparison names the event
      }
      if (position === before) return;
    }
  };
  follow(live);
  /**
   * The resume at `point`: the runtime writing the session is dropped, as a crash or a restart dropped it (what it
   * wrote after the point is lost with it), and a new one resumes the session from the log as it was there.
   */
  const resumeAt = async (point: number): Promise<void> => {
    const old = live;
    current = null;
    let count = 0;
    const end = point === 0 ? 0 : old.events.findIndex((e) => kept(e) && ++count === point) + 1;
    const prefix = old.events.slice(0, end);
    // what it wrote past the point is lost with it: the resumed runtime gives those ids again
    for (const e of old.events.slice(end)) usedIds.delete(e.id);
    gate.open();
    for (const call of [...pending.calls.values()]) call.settle({ thrown: new Error('the replay resumes the session here') });
    await disposed(old);
    pending.request = null;
    pending.calls.clear();
    const store = new MemoryEventStore();
    await store.append(sessionId, prefix.map((e) => envelopeOf(e, e.id)), 'no_stream');
    // a child's log is not part of the replay: the resume closes no child's run from it, the recorded ends are re-admitted
    gate = gatedStore(store, { readable: (stream) => stream === sessionId });
    resuming = point;
    try {
      // the resumed runtime's tools: the ones its first request offered (a restart may deploy other tools)
      offered = log.toolsFrom(recorded[point]?.seq ?? Number.POSITIVE_INFINITY) ?? offered;
      live = await runtimeOn(gate.store, offered).resume(sessionId, { systemPrompt });
    } finally {
      resuming = null;
    }
    follow(live);
  };
  const find = divergenceFinder(recorded);
  const produced = (): LogEvent[] => live.events.filter(kept);
  const blocked = (): boolean => pending.request !== null || pending.calls.size > 0 || gate.held() > 0 || live.status === 'idle';
  const settle = async (): Promise<void> => {
    let last = -1;
    for (let stable = 0, i = 0; stable < 2 && i < 5_000; i++) {
      await tick();
      const n = live.events.length;
      stable = n === last && blocked() ? stable + 1 : 0;
      last = n;
    }
  };

  const waitingFor = (): string =>
    pending.request
      ? `the answer of request ${pending.request.request.turn}.${pending.request.request.step} (attempt ${pending.request.request.attempt})`
      : pending.calls.size > 0
        ? `the outcome of tool call ${[...pending.calls.keys()].join(', ')}`
        : live.status === 'idle'
          ? 'input (the agent is idle)'
          : 'its own work (a hook that does not settle?)';
  /** The position the replay last acted at (an action is taken once per position). */
  let actedAt = -1;
  try {
    for (;;) {
      await settle();
      const now = produced();
      // up to a resume point only: what the dropped runtime wrote after it is not part of the log
      const point = resumes[0];
      const divergence = find(point === undefined ? now : now.slice(0, point));
      if (divergence) return { ok: false, events: Math.min(now.length, point ?? now.length), divergence };
      if (point !== undefined && now.length >= point) {
        resumes.shift();
        await resumeAt(point);
        actedAt = -1;
        continue;
      }
      const next = recorded[now.length];
      if (!next) {
        if (gate.held() > 0) {
          gate.release();
          continue;
        }
        if (blocked() && pending.request === null && pending.calls.size === 0) return { ok: true, events: now.length };
        return { ok: false, events: now.length, divergence: { seq: (recorded.at(-1)?.seq ?? -1) + 1, type: 'none', recorded: null, produced: null, waiting: waitingFor() } };
      }
      // acted on once: an action that produced nothing yet (a cancel while the runtime's write is held) is not
      // repeated, the held writes go through first
      const acted = actedAt !== now.length && actFor(scene, live, next, now.length);
      if (acted) {
        actedAt = acted === 'again' ? -1 : now.length;
        continue;
      }
      // not an input, an answer or an outcome: the runtime writes it once its held writes are through
      if (gate.held() > 0) {
        gate.release();
        continue;
      }
      return { ok: false, events: now.length, divergence: { seq: next.seq, type: next.type, recorded: next, produced: null, waiting: waitingFor() } };
    }
  } finally {
    gate.open();
    for (const call of [...pending.calls.values()]) call.settle({ thrown: new Error('the replay ended') });
    await disposed(live);
  }
};

/** Disposes an agent the replay is done with (a hook that never settles is not waited for past a second). */
const disposed = (agent: Agent): Promise<unknown> => Promise.race([agent.dispose().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000))]);

/** A logged event as a store's new event, with the id `id`. */
const envelopeOf = (e: LogEvent, id: string): NewEvent => ({
  id,
  type: e.type,
  time: e.time,
  data: e.data,
  ...(e.ignorable ? { ignorable: true as const } : {}),
  ...(e.metadata ? { metadata: e.metadata } : {}),
});
