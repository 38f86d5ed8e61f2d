import { ScriptedModel, type ScriptStep } from '../../../adapters/model/scripted/scripted-model.js';
import type { LogEvent } from '../../../domain/events.js';
import type { Agent } from '../../../runtime/agent.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import type { ChildrenOptions } from '../../../runtime/children/child-options.js';
import { childTools } from '../../../runtime/children/child-tools.js';
import { silentLogger } from '../../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../../runtime/ports/clock.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import type { ModelPort, ModelRequest, ModelResponse } from '../../../runtime/ports/model.js';
import { createRuntime, type Runtime } from '../../../runtime/runtime.js';
import type { Tool } from '../../../runtime/tools.js';
import { testStore, uniqueSessionId } from '../../support/test-store.js';
import { notate } from '../harness.js';

/**
 * A model with one script per session, chosen by the request's system prompt (`parent` for the root, the child's
 * id for a child: the harness's children manager gives each child its id as system prompt). Unscripted requests
 * answer `done <session>`.
 */
export class RoutedModel implements ModelPort {
  readonly provider = 'routed';
  readonly model = 'routed-1';
  readonly #scripts = new Map<string, ScriptedModel>();
  readonly requests: { readonly session: string; readonly request: ModelRequest }[] = [];

  script(session: string, ...steps: ScriptStep[]): this {
    this.#of(session).push(...steps);
    return this;
  }
  complete(request: ModelRequest): Promise<ModelResponse> {
    const session = request.system ?? 'unknown';
    this.requests.push({ session, request });
    return this.#of(session).complete(request);
  }
  #of(session: string): ScriptedModel {
    let m = this.#scripts.get(session);
    if (!m) this.#scripts.set(session, (m = new ScriptedModel([], { whenExhausted: `done ${session}` })));
    return m;
  }
}

/** Notation of the children's events on top of the scenario notation: DESC, START(child,epoch), END(child,epoch,reason). */
export const notateChild = (e: LogEvent, name: (id: string) => string = (id) => id): string => {
  const d = e.data as Record<string, unknown>;
  switch (e.type) {
    case 'subagent/descriptor':
      return `DESC(${d.mode})`;
    case 'subagent/start':
      return `START(${name(d.childSessionId as string)},${d.epoch})`;
    case 'subagent/end':
      return `END(${name(d.childSessionId as string)},${d.epoch},${d.stopReason})`;
    case 'user/message': {
      const source = d.source as { kind: string };
      return source.kind === 'user' ? `UM(${name(d.id as string)})` : `UM(${name(d.id as string)}:${source.kind})`;
    }
    default:
      return notate(e);
  }
};

export interface ChildHarnessOptions {
  readonly store?: EventStore;
  /** Resume this parent session instead of creating one (a restart over the same store). */
  readonly resumeParent?: string;
  readonly reportDelivery?: ChildrenOptions['reportDelivery'];
  readonly tools?: readonly Tool<Agent>[];
  readonly model?: RoutedModel;
}

/** A parent session, a children manager with the model tools, a routed scripted model; ids and clock deterministic. */
export const childSetup = (opts: ChildHarnessOptions = {}) => {
  const h = childSetupWith(opts);
  const parent = h.runtime.createSession({ sessionId: `${h.prefix}-parent`, systemPrompt: 'parent' });
  return { ...h, parent, ...naming(parent) };
};

/** The same over an existing store and model, with the parent resumed: what a host restart sees. */
export const restartedSetup = async (store: EventStore, model: RoutedModel, parentSessionId: string) => {
  const h = childSetupWith({ store, model }, ++restarts);
  const parent = await h.runtime.resume(parentSessionId, { systemPrompt: 'parent' });
  return { ...h, parent, ...naming(parent) };
};

let restarts = 0;
/** `eventIdBlock` keeps a restarted runtime's sequential event ids apart from the ones already stored. */
const childSetupWith = (opts: ChildHarnessOptions, eventIdBlock = 0) => {
  const store = opts.store ?? testStore();
  const model = opts.model ?? new RoutedModel();
  const prefix = uniqueSessionId('run');
  let counter = 0;
  const ids = { next: () => `${prefix}-${++counter}` };
  let manager!: ChildManager;
  const runtime: Runtime = createRuntime({
    store,
    model,
    tools: [...childTools(() => manager), ...(opts.tools ?? [])],
    clock: steppingClock(),
    ids: sequentialIds(eventIdBlock),
    logger: silentLogger,
    writeBatchDelayMs: 5,
  });
  manager = new ChildManager({
    runtime,
    ids,
    systemPrompt: (_d, childId) => childId,
    ...(opts.reportDelivery ? { reportDelivery: opts.reportDelivery } : {}),
  });
  return { store, model, runtime, manager, ids, prefix };
};

const naming = (parent: Agent) => {
  /** Short names for ids in notations: the parent is P, children C1, C2… in order of first appearance, messages m1… */
  const names = new Map<string, string>([[parent.sessionId, 'P']]);
  const name = (id: string): string => names.get(id) ?? id;
  const nameChild = (id: string, short: string) => names.set(id, short);
  const shorten = (text: string): string => {
    let out = text;
    for (const [id, short] of [...names].sort((a, b) => b[0].length - a[0].length)) out = out.split(id).join(short);
    return out;
  };
  const durable = (agent: Agent | readonly LogEvent[]): string[] =>
    // the scenario notation folds a request's provenance into its answer (see test/runtime/harness.ts)
    ('events' in agent ? agent.events : agent)
      .filter((e) => e.type !== 'session/created' && e.type !== 'request/header' && e.type !== 'request/context')
      .map((e) => shorten(notateChild(e)));
  return { durable, nameChild, name };
};

/** Reads a stored session's events (what a restart would see). */
export const storedEvents = async (store: EventStore, sessionId: string): Promise<LogEvent[]> => {
  const out: LogEvent[] = [];
  for await (const r of store.read(sessionId)) out.push({ seq: Number(r.revision), id: r.id, time: r.time, type: r.type, data: r.data } as LogEvent);
  return out;
};
