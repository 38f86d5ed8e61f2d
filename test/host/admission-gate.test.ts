import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { Host } from '../../host/host.js';
import { silentLogger } from '../../runtime/logger.js';
import type { LoopGate } from '../../runtime/loop-slices.js';
import { createRuntime } from '../../runtime/runtime.js';

const ctx = { rpcId: 'r', principal: { id: 'local' } };

/** A gate the test opens by hand: every `next()` waits until `open()`. */
const handGate = () => {
  const waiting: (() => void)[] = [];
  const gate: LoopGate = { next: () => new Promise<void>((resolve) => waiting.push(resolve)) };
  return { gate, waiting: () => waiting.length, open: () => waiting.splice(0).forEach((go) => go()) };
};

const hostWith = (admissionGate?: LoopGate) =>
  new Host({
    runtime: createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel([], { whenExhausted: { text: 'ok' } }), logger: silentLogger, writeBatchDelayMs: 5 }),
    logger: silentLogger,
    ...(admissionGate ? { admissionGate } : {}),
  });

const splices = (host: Host, sessionId: string) => host.live.get(sessionId)!.agent.events.filter((e) => e.type === 'agent/inbox/spliced').length;

describe('HostOptions.admissionGate', () => {
  it('a prompt is checked at once, admitted only when the gate releases it, and answered with its receipt', async () => {
    const g = handGate();
    const host = hostWith(g.gate);
    expect((await host.call('session.create', { sessionId: 's1' }, ctx)).ok).toBe(true);
    const answer = host.call('session.prompt', { sessionId: 's1', mode: 'queue', content: [{ type: 'text', text: 'hi' }], messageId: 'm1' }, ctx);
    // a malformed prompt is refused without waiting at the gate
    const refused = await host.call('session.prompt', { sessionId: 's1', mode: 'queue', content: 'not blocks' }, ctx);
    expect(refused.ok).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(g.waiting()).toBe(1);
    expect(splices(host, 's1')).toBe(0);
    g.open();
    const result = await answer;
    expect(result).toMatchObject({ ok: true, value: { accepted: true, messageId: 'm1', seq: 1 } });
    expect(splices(host, 's1')).toBeGreaterThanOrEqual(1);
    await host.live.get('s1')!.agent.whenIdle();
    await host.close();
  });

  it('is refused when it is not a gate', () => {
    expect(() => hostWith({} as LoopGate)).toThrow(/admissionGate/);
  });
});
