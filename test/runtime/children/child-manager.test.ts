import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../adapters/model/scripted/scripted-model.js';
import { hasChildCode } from '../../../domain/children/child-errors.js';
import { isInvalidMessageError } from '../../../domain/errors.js';
import { ChildManager } from '../../../runtime/children/child-manager.js';
import { childSetup } from './child-harness.js';
import { until } from './support.js';

const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe('children manager: setup from the descriptor, caps, admission', () => {
  it('a child runs on its descriptor\'s model route with its tool filter plus report, at start and again after a cold resume', async () => {
    const h = childSetup();
    const special = new ScriptedModel([], { whenExhausted: 'special answer' });
    const manager = new ChildManager({ runtime: h.runtime, route: (d) => (d.agentModel === 'special' ? special : undefined) });
    const c1 = `${h.prefix}-c1`;
    await manager.startContinuable(h.parent, { content: 'task', childSessionId: c1, agentModel: 'special', toolFilter: ['list_agents'] });
    await until(() => manager.state(c1) === 'absent');
    await manager.followup(h.parent, c1, 'again');
    await until(() => manager.state(c1) === 'absent');
    expect(special.requests).toHaveLength(2);
    for (const r of special.requests) expect(r.tools.map((t) => t.name).sort()).toEqual(['list_agents', 'report']);
    expect(h.model.requests.filter((r) => r.session === c1)).toEqual([]);
  });

  it('refuses a child deeper than the cap, a duplicate id, and invalid content, before anything is written', async () => {
    const h = childSetup();
    const manager = new ChildManager({ runtime: h.runtime, maxDepth: 1 });
    const c1 = `${h.prefix}-c1`;
    const hold = new Promise<never>(() => {});
    h.model.script(c1, () => hold);
    await manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    const child = h.runtime.liveAgent(c1)!;
    expect(hasChildCode(await refusal(manager.startContinuable(child, { content: 'deeper' })), 'subagent-depth-exceeded')).toBe(true);
    expect(hasChildCode(await refusal(manager.startContinuable(h.parent, { content: 'again', childSessionId: c1 })), 'subagent-duplicate-child')).toBe(true);
    const before = h.parent.events.length;
    const bad = await refusal(manager.startContinuable(h.parent, { content: [{ type: 'image', mediaType: 'image/png', data: '%%' }] as never }));
    expect(isInvalidMessageError(bad)).toBe(true);
    expect(h.parent.events.length).toBe(before);
  });

  it('a start aborted before acceptance leaves no child, no ownership and nothing in the parent\'s log', async () => {
    const h = childSetup();
    const abort = new AbortController();
    const c1 = `${h.prefix}-c1`;
    const started = h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1, signal: abort.signal });
    abort.abort();
    expect(hasChildCode(await refusal(started), 'subagent-cancelled')).toBe(true);
    expect(h.runtime.liveAgent(c1)).toBeUndefined();
    expect(h.manager.list(h.parent.sessionId)).toEqual([]);
    expect(h.parent.events.filter((e) => e.type.startsWith('subagent/'))).toEqual([]);
  });

  it('draining disposes every activation and refuses later starts and deliveries', async () => {
    const h = childSetup();
    const c1 = `${h.prefix}-c1`;
    h.model.script(c1, (req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted')))));
    await h.manager.startContinuable(h.parent, { content: 'task', childSessionId: c1 });
    await h.manager.drain();
    expect(h.manager.state(c1)).toBe('absent');
    expect(h.parent.events.at(-1)).toMatchObject({ type: 'subagent/end', data: { stopReason: 'stopped' } });
    expect(hasChildCode(await refusal(h.manager.followup(h.parent, c1, 'x')), 'subagent-delivery-unavailable')).toBe(true);
    expect(hasChildCode(await refusal(h.manager.startContinuable(h.parent, { content: 'y' })), 'subagent-delivery-unavailable')).toBe(true);
  });
});
