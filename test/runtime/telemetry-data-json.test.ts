import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { createUserMessage } from '../../domain/message.js';
import { silentLogger } from '../../runtime/logger.js';
import type { SessionTelemetry } from '../../runtime/ports/telemetry.js';
import { createRuntime } from '../../runtime/runtime.js';

/** The data's JSON the runtime hands the telemetry port with each event (what the export worker's hand-over reuses). */

const recording = () => {
  const seen: [LogEvent, string | undefined][] = [];
  const telemetry: SessionTelemetry = { follow: () => {}, observe: (_s, e, dataJson) => void seen.push([e, dataJson]), forget: () => {} };
  return { seen, telemetry };
};

const runTurns = async (options: { encryption?: { keys: MemoryKeyStore } }, telemetry: SessionTelemetry) => {
  const runtime = createRuntime({ store: new MemoryEventStore(), model: new ScriptedModel(['SECRET-REPLY']), logger: silentLogger, writeBatchDelayMs: 0, telemetry, ...options });
  const agent = runtime.createSession({ sessionId: 'dj' });
  agent.followup(createUserMessage('SECRET-INPUT'));
  await agent.whenIdle();
  await agent.dispose();
};

describe('the data JSON handed to the telemetry port', () => {
  it('is JSON.stringify(event.data) for every event the runtime appends', async () => {
    const { seen, telemetry } = recording();
    await runTurns({}, telemetry);
    expect(seen.length).toBeGreaterThan(5);
    for (const [event, dataJson] of seen) expect(dataJson).toBe(JSON.stringify(event.data));
  });

  it('is absent when content is sealed (the stored form is not the event’s data), and never carries the sealed text', async () => {
    const { seen, telemetry } = recording();
    await runTurns({ encryption: { keys: new MemoryKeyStore() } }, telemetry);
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.every(([, dataJson]) => dataJson === undefined)).toBe(true);
  });
});
