import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { Host } from '../../host/host.js';
import type { HostSignal } from '../../host/host-types.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';

const ctx = { rpcId: 'r', principal: { id: 'local' } };
const hostOf = () =>
  new Host({
    runtime: createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: { text: 'ok' } }), logger: silentLogger, writeBatchDelayMs: 5 }),
    logger: silentLogger,
  });

describe('Host.listenSessions', () => {
  it('hears sessions attach and leave, never a frame, and is no live-mirror listener', async () => {
    const host = hostOf();
    const heard: HostSignal['kind'][] = [];
    const off = host.listenSessions((s) => heard.push(s.kind));
    expect(host.listenerCount).toBe(0);
    expect((await host.call('session.create', { sessionId: 's1' }, ctx)).ok).toBe(true);
    expect((await host.call('session.prompt', { sessionId: 's1', mode: 'queue', content: [{ type: 'text', text: 'hi' }] }, ctx)).ok).toBe(true);
    await host.live.get('s1')!.agent.whenIdle();
    expect(heard).toEqual(['attached']);
    await host.close();
    expect(heard).toEqual(['attached', 'detached']);
    off();
  });

  it('beside a frame listener: the frame listener gets the frames, the sessions listener still none', async () => {
    const host = hostOf();
    const sessions: HostSignal['kind'][] = [];
    const frames: string[] = [];
    host.listenSessions((s) => sessions.push(s.kind));
    host.listen((s) => {
      if (s.kind === 'frame') frames.push(s.frame.type);
    });
    expect(host.listenerCount).toBe(1);
    expect((await host.call('session.create', { sessionId: 's2' }, ctx)).ok).toBe(true);
    expect((await host.call('session.prompt', { sessionId: 's2', mode: 'queue', content: [{ type: 'text', text: 'hi' }] }, ctx)).ok).toBe(true);
    await host.live.get('s2')!.agent.whenIdle();
    expect(frames).toContain('session/event');
    expect(frames).toContain('session/queue');
    expect(sessions).toEqual(['attached']);
    await host.close();
  });
});
