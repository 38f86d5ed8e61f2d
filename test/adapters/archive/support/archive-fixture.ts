import { ScriptedModel } from '../../../../adapters/model/scripted/scripted-model.js';
import { steppingClock, sequentialIds } from '../../../../runtime/ports/clock.js';
import type { EventStore } from '../../../../runtime/ports/event-store.js';
import { silentLogger } from '../../../../runtime/logger.js';
import { createRuntime, type CreateSessionOptions } from '../../../../runtime/runtime.js';
import { GateModel } from '../../../support/gate-model.js';
import { msg } from '../../../support/log-builder.js';

/** Sessions before OLD_END are old; RECENT ones start after the cutoff. */
export const OLD = 1_700_000_000_000;
export const CUTOFF = 1_750_000_000_000;
export const RECENT = 1_800_000_000_000;

/** One finished session (a tool round with staged context, then a second follow-up), written by the runtime into `store`. */
export const finishedSession = async (store: EventStore, start: number, options: CreateSessionOptions & { sessionId: string }): Promise<void> => {
  const runtime = createRuntime({
    store,
    model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'look' }] }, 'looked', 'done']),
    tools: [{ name: 'look', execute: () => ({ content: 'seen', additionalContexts: [msg('ctx-1', 'context from look', { kind: 'plugin', plugin: 'p' })] }) }],
    clock: steppingClock(start, 10),
    ids: sequentialIds(7),
    logger: silentLogger,
    writeBatchDelayMs: 1,
  });
  const agent = runtime.createSession({ ...options, metadata: { actor: 'user:ana' } });
  agent.followup(msg('m1', 'find it'), { metadata: { actor: 'user:ana' } });
  await agent.whenIdle();
  agent.followup(msg('m2', 'and then?'));
  await agent.whenIdle();
  await agent.dispose();
};

/** A session whose turn is still open (its model never answers) with a second input pending, checkpointed and abandoned. */
export const openSession = async (store: EventStore, start: number, sessionId: string): Promise<void> => {
  const model = new GateModel();
  const runtime = createRuntime({ store, model, clock: steppingClock(start, 10), ids: sequentialIds(3), logger: silentLogger, writeBatchDelayMs: 1 });
  const agent = runtime.createSession({ sessionId });
  agent.followup(msg('p1', 'working on it'));
  await model.started(1);
  agent.followup(msg('p2', 'later'));
  await agent.checkpoint();
};

/**
 * The fixture every archive test uses:
 * - old-a: finished long ago — moves;
 * - old-parent + old-child: a finished family — moves together;
 * - old-parent-2 + new-child: the parent is old, its child recent — both stay (family-not-ended, recent);
 * - new-b: recent — stays;
 * - old-open: old, but its turn is open — stays.
 */
export const populate = async (store: EventStore): Promise<void> => {
  await finishedSession(store, OLD, { sessionId: 'old-a' });
  await finishedSession(store, OLD + 1000, { sessionId: 'old-parent' });
  await finishedSession(store, OLD + 2000, { sessionId: 'old-child', parentSession: 'old-parent' });
  await finishedSession(store, OLD + 3000, { sessionId: 'old-parent-2' });
  await finishedSession(store, RECENT, { sessionId: 'new-child', parentSession: 'old-parent-2' });
  await finishedSession(store, RECENT + 1000, { sessionId: 'new-b' });
  await openSession(store, OLD + 4000, 'old-open');
};
export const MOVED = ['old-a', 'old-parent', 'old-child'];
export const KEPT = [
  { session: 'old-parent-2', reason: 'family-not-ended' },
  { session: 'new-child', reason: 'recent' },
  { session: 'new-b', reason: 'recent' },
  { session: 'old-open', reason: 'open-turn' },
];
