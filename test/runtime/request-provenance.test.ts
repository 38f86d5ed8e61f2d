import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { auditLines } from '../../domain/audit.js';
import type { LogEvent } from '../../domain/events.js';
import { createUserMessage } from '../../domain/message.js';
import { createKeyring, openEnvelope } from '../../runtime/content-opener.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { ModelPort } from '../../runtime/ports/model.js';
import { createRuntime, type RuntimeOptions } from '../../runtime/runtime.js';
import { LogBuilder, msg } from '../../testing/log-builder.js';
import { notate } from './harness.js';

/**
 * A step's provenance (docs/protocol.md, "Request provenance"): request/header before a request — initial, resume,
 * then only on change — and request/context when the route changes, after step/start and the step's user/messages.
 */
const runtimeOn = (store: MemoryEventStore, model: ModelPort, extra: Partial<RuntimeOptions> = {}, prefix = 0) =>
  createRuntime({ store, model, clock: steppingClock(), ids: sequentialIds(prefix), logger: silentLogger, writeBatchDelayMs: 1, ...extra });
const durable = (events: readonly LogEvent[]) => events.filter((e) => e.type !== 'session/created').map(notate);
const provenance = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'request/header' || e.type === 'request/context').map((e) => ({ type: e.type, data: e.data }));
const audit = (events: readonly LogEvent[]) => auditLines('s', events.map((e) => JSON.stringify(e)));

describe('request provenance', () => {
  it('the first request writes request/header initial and request/context after the step’s user messages; an unchanged request writes none', async () => {
    const store = new MemoryEventStore();
    const model = Object.assign(new ScriptedModel([], { whenExhausted: 'ok' }), { contextWindow: 64000 });
    const tools = [{ name: 'look', description: 'Looks it up.', execute: () => ({ content: 'x' }) }];
    const agent = runtimeOn(store, model, { tools }).createSession({ sessionId: 's', systemPrompt: 'Be brief.' });
    agent.followup(msg('A'));
    await agent.whenIdle();
    agent.followup(msg('B'));
    await agent.whenIdle();
    expect(durable(agent.events)).toEqual([
      'SPL(NT,0,[A])', 'TS(1)', 'SPL(NT,0,rc=1)', 'SS(1,1)', 'UM(A)', 'RH(initial)', 'RC', 'AM', 'SE(1,1)', 'TE(1,completed)',
      'SPL(NT,0,[B])', 'TS(2)', 'SPL(NT,0,rc=1)', 'SS(2,1)', 'UM(B)', 'AM', 'SE(2,1)', 'TE(2,completed)',
    ]);
    expect(provenance(agent.events)).toEqual([
      {
        type: 'request/header',
        data: { header: { config: { provider: 'scripted', model: 'scripted-1' }, system: 'Be brief.', tools: [{ name: 'look', description: 'Looks it up.' }] }, reason: 'initial' },
      },
      { type: 'request/context', data: { provider: 'scripted', model: 'scripted-1', contextWindow: 64000 } },
    ]);
    // what the model got is what the header says
    expect(model.requests[0]).toMatchObject({ system: 'Be brief.', tools: [{ name: 'look', description: 'Looks it up.' }] });
    expect(audit(agent.events).ok).toBe(true);
  });

  it('a system prompt that changes writes request/header change at that step only', async () => {
    const store = new MemoryEventStore();
    const agent = runtimeOn(store, new ScriptedModel([], { whenExhausted: 'ok' })).createSession({ sessionId: 's', systemPrompt: ({ turn }) => (turn < 3 ? 'v1' : 'v2') });
    for (const id of ['A', 'B', 'C']) {
      agent.followup(msg(id));
      await agent.whenIdle();
    }
    expect(durable(agent.events).filter((n) => n.startsWith('RH') || n.startsWith('RC') || n.startsWith('SS'))).toEqual(['SS(1,1)', 'RH(initial)', 'RC', 'SS(2,1)', 'SS(3,1)', 'RH(change)']);
    expect(provenance(agent.events).filter((p) => p.type === 'request/header').map((p) => (p.data as { header: { system: string } }).header.system)).toEqual(['v1', 'v2']);
  });

  it('a resumed runtime writes request/header resume; request/context only when the route differs from the log’s', async () => {
    const store = new MemoryEventStore();
    const first = runtimeOn(store, new ScriptedModel([], { whenExhausted: 'ok' })).createSession({ sessionId: 's' });
    first.followup(msg('A'));
    await first.whenIdle();
    await first.dispose();
    const same = await runtimeOn(store, new ScriptedModel([], { whenExhausted: 'ok' }), {}, 1).resume('s');
    same.followup(msg('B'));
    await same.whenIdle();
    await same.dispose();
    const other: ModelPort = { provider: 'other', model: 'big', contextWindow: 200000, complete: async () => ({ content: [{ type: 'text', text: 'hi' }], finishReason: 'stop' }) };
    const moved = await runtimeOn(store, other, {}, 2).resume('s');
    moved.followup(msg('C'));
    await moved.whenIdle();
    expect(durable(moved.events).filter((n) => /^(RH|RC|SS)/.test(n))).toEqual(['SS(1,1)', 'RH(initial)', 'RC', 'SS(2,1)', 'RH(resume)', 'SS(3,1)', 'RH(resume)', 'RC']);
    expect(provenance(moved.events).at(-1)).toEqual({ type: 'request/context', data: { provider: 'other', model: 'big', contextWindow: 200000 } });
    expect(audit(moved.events).ok).toBe(true);
  });

  it('a retried request writes nothing new; with encryption the system prompt and tool descriptions are sealed, names and config readable', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    const model = new ScriptedModel([{ error: { message: 'busy', code: 'HTTP_503', status: 503 } }, 'ok']);
    const tools = [{ name: 'look', description: 'SECRET-TOOL-DOC', execute: () => ({ content: 'x' }) }];
    const agent = runtimeOn(store, model, { tools, encryption: { keys }, retry: { baseDelayMs: 0, maxDelayMs: 0, random: () => 0 } }).createSession({ sessionId: 's', systemPrompt: 'SECRET-SYSTEM' });
    agent.followup(createUserMessage('hi', { kind: 'user' }, { newId: () => 'm1' }));
    await agent.whenIdle();
    await agent.checkpoint();
    expect(durable(agent.events).filter((n) => /^(RH|RC|RE|AM)/.test(n))).toEqual(['RH(initial)', 'RC', 'RE(1,HTTP_503,retry 0)', 'AM']);
    const raw: { type: string; data: unknown }[] = [];
    for await (const r of store.read('s')) raw.push(r as never);
    const header = raw.find((r) => r.type === 'request/header')!;
    expect(JSON.stringify(header.data)).not.toContain('SECRET');
    expect(header.data).toMatchObject({ header: { config: { provider: 'scripted', model: 'scripted-1' }, system: '', tools: [{ name: 'look' }] }, reason: 'initial', sealed: { alg: 'aes-256-gcm' } });
    const opened = (await openEnvelope({ seq: 0, type: header.type, data: header.data }, createKeyring(keys))) as { data: unknown };
    expect(opened.data).toEqual({ header: { config: { provider: 'scripted', model: 'scripted-1' }, system: 'SECRET-SYSTEM', tools: [{ name: 'look', description: 'SECRET-TOOL-DOC' }] }, reason: 'initial' });
  });

  it('a log written before steerlog recorded provenance has none and stays valid', () => {
    const log = new LogBuilder('old').followup(msg('A')).runTurn().toJsonl();
    const report = auditLines('old', log.split('\n'));
    expect(report.ok).toBe(true);
    expect(log).not.toContain('request/header');
  });
});
