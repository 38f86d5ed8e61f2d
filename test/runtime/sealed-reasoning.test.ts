import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { AssistantBlock } from '../../domain/events.js';
import { createUserMessage } from '../../domain/message.js';
import { eraseKeys } from '../../runtime/erase.js';
import { loadSession } from '../../runtime/load-session.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { ModelPort } from '../../runtime/ports/model.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { createRuntime } from '../../runtime/runtime.js';

/**
 * A reasoning block's provider forms — a thinking `signature` and `redacted` reasoning (Anthropic's redacted_thinking
 * data) — are content: with encryption on they are sealed with the block's text, restored with the key, and gone
 * after an erasure.
 */
const SIGNATURE = 'sig-never-in-the-store';
const REDACTED = 'redacted-never-in-the-store';
const answer: AssistantBlock[] = [
  { type: 'reasoning', text: 'thinking it over', signature: SIGNATURE },
  { type: 'reasoning', text: '', redacted: REDACTED },
  { type: 'text', text: 'done' },
];
const model: ModelPort = { provider: 'p', model: 'm', complete: async () => ({ content: answer, finishReason: 'stop' }) };

describe('reasoning signatures and redacted reasoning under encryption', () => {
  it('are stored sealed, read back whole with the key, and erased with it', async () => {
    const store = new MemoryEventStore();
    const keys = new MemoryKeyStore();
    const runtime = createRuntime({ store, model, logger: silentLogger, encryption: { keys } });
    const agent = runtime.createSession({ sessionId: 's' });
    agent.followup(createUserMessage('think'));
    await agent.whenIdle();
    await agent.checkpoint();
    const stored: string[] = [];
    for await (const e of store.readAll()) stored.push(JSON.stringify(envelopeOfRecorded(e)));
    expect(stored.join('\n')).not.toContain(SIGNATURE);
    expect(stored.join('\n')).not.toContain(REDACTED);
    const message = (events: readonly { type: string; data: unknown }[]) => (events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] } }).message.content;
    expect(message((await loadSession(store, 's', keys)).events)).toEqual(answer);
    await eraseKeys({ store, keys, clock: steppingClock(1_800_000_000_000), ids: sequentialIds(9000), logger: silentLogger, selector: { session: 's' }, by: 'dpo:eve' });
    expect(message((await loadSession(store, 's', keys)).events)).toEqual([
      { type: 'reasoning', text: '[erased]', signature: '' },
      { type: 'reasoning', text: '[erased]', redacted: '' },
      { type: 'text', text: '[erased]' },
    ]);
  });
});
