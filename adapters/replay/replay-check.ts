import { isKnownEvent, type AbortCause, type LogEvent } from '../../domain/events.js';
import type { EventMetadata } from '../../domain/event-metadata.js';
import type { Agent, AgentOptions } from '../../runtime/agent.js';
import { retry } from '../../runtime/hooks.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { LateToolResults } from '../../runtime/tool-runner.js';
import type { Tool } from '../../runtime/tools.js';
import { MemoryEventStore } from '../store/memory/memory-event-store.js';
import { gatedStore } from './gated-store.js';
import { divergenceFinder, type ReplayDivergence } from './event-compare.js';
import { readRecordedLog, type RecordedLog } from './recorded-log.js';
import { answerOf, failureOf, outcomeOf, recordedModel, recordedTools, type Pending } from './recorded-ports.js';

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

/** A claim: the runtime's own removal (no outcome, nothing inserted). */
const isClaim = (data: { readonly removedCount?: number; readonly outcome?: string; readonly inserted: readonly unknown[] }): boolean =>
  data.removedCount !== undefined && data.outcome === undefined && data.inserted.length === 0;

const withoutCause = (m: EventMetadata | undefined): EventMetadata => {
  const { causationId: _c, ...rest } = m ?? {};
  return rest;
};

/**
 * Did the tool result at `index` conclude its turn (`concludesTurn`, which the log does not record)? A step whose
 * answer asked for tools ends its turn `completed` only when a result concluded it: so the last result of such a
 * step, when the step's `step/end` is followed by the turn's `turn/end {completed}`, is answered as concluding.
 */
const concludedBy = (recorded: readonly LogEvent[], index: number): boolean => {
  const { turn, step } = recorded[index]!.data as { turn: number; step: number };
  const same = (e: LogEvent): boolean => (e.data as { turn?: number; step?: number }).turn === turn && (e.data as { step?: number }).step === step;
  for (let i = index + 1; i < recorded.length; i++) {
    const e = recorded[i]!;
    if (e.type === 'tool/result' && same(e)) return false;
    if (e.type === 'step/end' && same(e)) {
      const after = recorded[i + 1];
      return after?.type === 'turn/end' && (after.data as { turn: number; reason: { kind: string } }).turn === turn && (after.data as { reason: { kind: string } }).reason.kind === 'completed';
    }
  }
  return false;
};

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
  let agent: Agent | null = null;
  /** How many compared events the runtime has produced: the position of the next one. */
  let position = 0;
  let createdRead = false;
  const usedIds = new Set<string>();
  let extraIds = 0;
  const at = (): LogEvent => recorded[Math.min(position, recorded.length - 1)]!;
  const pending: Pending = { request: null, calls: new Map() };
  const memory = new MemoryEventStore();
  const gate = gatedStore(memory);
  const runtime = createRuntime({
    store: gate.store,
    model: recordedModel(log, () => position, pending),
    tools: recordedTools(log, pending, options.tools ?? []),
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
        const fresh = usedIds.has(id) ? `${id}~${++extraIds}` : id;
        usedIds.add(fresh);
        return fresh;
      },
    },
    logger: silentLogger,
    writeBatchDelayMs: 0,
    retry: { sleep: async () => undefined },
    ...(options.toolConcurrency !== undefined ? { toolConcurrency: options.toolConcurrency } : {}),
    ...(options.lateToolResults !== undefined ? { lateToolResults: options.lateToolResults } : {}),
  });
  const created = log.created;
  const first = recorded[0]!;
  const setup = {
    sessionId: created.sessionId,
    ...(created.kind !== 'ordinary' ? { kind: created.kind } : {}),
    ...(created.origin !== undefined ? { origin: created.origin } : {}),
    ...(created.delegationDepth !== undefined ? { delegationDepth: created.delegationDepth } : {}),
    // a step that recorded no system prompt is asked with none (the runtime leaves an undefined one out of the header)
    systemPrompt: options.systemPrompt ?? (({ turn, step }: { turn: number; step: number }) => log.systemOf(turn, step) as string),
  };
  let live: Agent;
  if (created.seedLength !== undefined && created.parentSession !== undefined) {
    // a fork: its seed is the origin's first events; the origin's last one is the fork's cause
    const seed = recorded.slice(1, 1 + created.seedLength);
    const cause = first.metadata?.causationId;
    await memory.append(
      created.parentSession,
      seed.map((e, i) => ({
        id: i === seed.length - 1 && cause !== undefined ? cause : globalThis.crypto.randomUUID(),
        type: e.type,
        time: e.time,
        data: e.data,
        ...(e.ignorable ? { ignorable: true as const } : {}),
        ...(e.metadata ? { metadata: e.metadata } : {}),
      })),
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
  agent = live;
  position = live.events.filter(kept).length;
  live.onEvent((e) => {
    if (kept(e)) position++;
  });
  options.install?.(live);
  // the recorded retry decisions, innermost after the deployment's own request-error listeners
  live.on('request-error', (ctx) => {
    const next = recorded[position];
    if (next?.type !== 'request/error' || !isKnownEvent(next)) return undefined;
    const d = next.data as { turn: number; step: number; attempt: number; retryInMs?: number };
    return d.turn === ctx.turn && d.step === ctx.step && d.attempt === ctx.attempt && d.retryInMs !== undefined ? retry(d.retryInMs) : undefined;
  });
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
  const abortCause = (turn: number): AbortCause => {
    const end = log.endOf(turn);
    return end?.kind === 'aborted' ? end.reason : { kind: 'user' };
  };
  const turnEndMetadata = (turn: number): EventMetadata => {
    const end = recorded.find((e) => e.type === 'turn/end' && (e.data as { turn: number }).turn === turn);
    return withoutCause(end?.metadata);
  };
  /** Does what the next recorded event needs from outside the runtime; false when nothing can produce it. */
  const act = (next: LogEvent, index: number): boolean => {
    if (!isKnownEvent(next)) return false;
    const request = pending.request;
    const requested = (d: { turn: number; step: number }): boolean => request !== null && request.request.turn === d.turn && request.request.step === d.step;
    switch (next.type) {
      case 'agent/inbox/spliced': {
        if (isClaim(next.data) || next.metadata?.actor?.startsWith('tool:')) return false;
        // in a log without metadata, a next-step insertion right after a tool result is what the result staged
        if (!metadataRecorded && recorded[index - 1]?.type === 'tool/result' && next.data.target === 'next-step' && next.data.removedCount === undefined) return false;
        try {
          live.readmit(next.data, next.metadata);
          return true;
        } catch {
          return false;
        }
      }
      case 'assistant/chunk':
        if (!requested(next.data)) return false;
        request!.request.onChunk({ type: next.data.chunk.type, text: next.data.chunk.text });
        return true;
      case 'assistant/message': {
        if (!requested(next.data)) return false;
        if (next.data.interrupted) {
          live.cancel(abortCause(next.data.turn), { keepInbox: true, metadata: turnEndMetadata(next.data.turn) });
          return true;
        }
        pending.request = null;
        const turn = next.data.turn;
        const lastOfTurn = !recorded.slice(index + 1).some((e) => e.type === 'assistant/message' && (e.data as { turn: number }).turn === turn);
        request!.answer(answerOf(next.data, lastOfTurn && log.endOf(turn)?.kind === 'max-tokens'));
        return true;
      }
      case 'request/error':
        if (!requested(next.data)) return false;
        pending.request = null;
        request!.answer(failureOf(next.data));
        return true;
      case 'tool/result': {
        const call = pending.calls.get(next.data.message.callId);
        if (!call) return false;
        const name = recorded.find((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === next.data.message.callId);
        const recordedOutcome = outcomeOf(recorded, index, (name?.data as { name: string } | undefined)?.name ?? '', !metadataRecorded);
        const outcome = !('thrown' in recordedOutcome) && concludedBy(recorded, index) ? { ...recordedOutcome, concludesTurn: true as const } : recordedOutcome;
        if (next.data.error?.code === 'ABORTED') live.cancel(abortCause(next.data.turn), { keepInbox: true, metadata: turnEndMetadata(next.data.turn) });
        call.settle(outcome);
        return true;
      }
      case 'subagent/descriptor':
      case 'subagent/start':
      case 'subagent/end':
        // a child's lifecycle, as the children manager recorded it (the child runs in its own session, not here)
        live.recordChildEvent(next.type, next.data as never);
        return true;
      case 'turn/start':
        return live.status === 'idle' && live.wake(next.metadata ? { metadata: next.metadata } : {});
      case 'turn/end':
        if (next.data.reason.kind !== 'aborted' || live.status === 'idle') return false;
        live.cancel(next.data.reason.reason, { keepInbox: true, metadata: withoutCause(next.metadata) });
        return true;
      default:
        return false;
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
  try {
    for (;;) {
      await settle();
      const now = produced();
      const divergence = find(now);
      if (divergence) return { ok: false, events: now.length, divergence };
      const next = recorded[now.length];
      if (!next) {
        if (gate.held() > 0) {
          gate.release();
          continue;
        }
        if (blocked() && pending.request === null && pending.calls.size === 0) return { ok: true, events: now.length };
        return { ok: false, events: now.length, divergence: { seq: (recorded.at(-1)?.seq ?? -1) + 1, type: 'none', recorded: null, produced: null, waiting: waitingFor() } };
      }
      if (act(next, now.length)) continue;
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
    await Promise.race([live.dispose().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000))]);
  }
};
