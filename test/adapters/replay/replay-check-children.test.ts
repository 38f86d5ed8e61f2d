import { describe, expect, it } from 'vitest';
import { replayCheck } from '../../../adapters/replay/replay-check.js';
import { loadLog } from '../../../audit/load-log.js';
import { storeSource } from '../../../audit/log-source.js';
import type { LogEvent } from '../../../domain/events.js';
import type { ChildManager } from '../../../runtime/children/child-manager.js';
import type { EventStore } from '../../../runtime/ports/event-store.js';
import { deferred } from '../../runtime/harness.js';
import { childSetup } from '../../runtime/children/child-harness.js';
import { spawnTool, until } from '../../runtime/children/support.js';

const stored = async (store: EventStore, session: string): Promise<readonly LogEvent[]> => {
  const loaded = (await loadLog(storeSource(store, session)))!;
  expect(loaded.error).toBeNull();
  return loaded.events;
};

describe('replayCheck of sessions with children', () => {
  it('a parent that starts a child, the child that starts a grandchild through a tool, and the grandchild: each reproduced', async () => {
    let manager!: ChildManager;
    const h = childSetup({ tools: [spawnTool(() => manager)] });
    manager = h.manager;
    const c1 = `${h.prefix}-c1`;
    const g = `${h.prefix}-g`;
    const gate = deferred();
    h.model.script(c1, { toolCalls: [{ callId: 't1', name: 'spawn', arguments: { id: g, task: 'sub' } }] }, 'spawned');
    h.model.script(g, async () => {
      await gate.promise;
      return 'grand done';
    });
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    await until(() => child.status === 'idle' && h.manager.state(c1) === 'waiting');
    await h.manager.followup(h.parent, c1, 'more');
    await child.whenIdle();
    gate.resolve();
    await until(() => h.manager.state(c1) === 'absent');
    await h.parent.whenIdle();
    await h.parent.checkpoint();
    const logs = { parent: await stored(h.store, h.parent.sessionId), child: await stored(h.store, c1), grandchild: await stored(h.store, g) };
    // what each log holds of the children: edges in the parents, a descriptor in each child
    expect(logs.parent.map((e) => e.type)).toContain('subagent/start');
    expect(logs.child.map((e) => e.type)).toEqual(expect.arrayContaining(['subagent/descriptor', 'subagent/start', 'subagent/end']));
    expect(logs.grandchild[1]!.type).toBe('subagent/descriptor');
    for (const events of Object.values(logs)) expect(await replayCheck(events)).toEqual({ ok: true, events: events.length });
  });
});
