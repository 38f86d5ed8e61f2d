import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../adapters/keys/memory-key-store.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import { createUserMessage } from '../../domain/message.js';
import { silentLogger } from '../../runtime/logger.js';
import { envelopeOfRecorded } from '../../runtime/ports/recorded-envelope.js';
import { createRuntime } from '../../runtime/runtime.js';

/** A provider may echo the request in its error message: a request/error's message is sealed like a turn/end's. */
describe('request/error under encryption', () => {
  it('stores the failure message encrypted (code and status in clear); the live log reads it back', async () => {
    const store = new MemoryEventStore();
    const secret = 'the secret prompt sk-42';
    const runtime = createRuntime({
      store,
      model: new ScriptedModel([{ error: { message: `rejected: ${secret}`, code: 'HTTP_503', status: 503 } }, 'ok']),
      logger: silentLogger,
      encryption: { keys: new MemoryKeyStore() },
      retry: { sleep: async () => {} },
    });
    const agent = runtime.createSession({ sessionId: 'sealed-retry' });
    agent.followup(createUserMessage('hello'));
    await agent.whenIdle();
    await agent.dispose();
    const stored: string[] = [];
    for await (const e of store.read('sealed-retry')) stored.push(JSON.stringify(envelopeOfRecorded(e)));
    const failure = stored.map((l) => JSON.parse(l)).find((e) => e.type === 'request/error');
    expect(failure.data).toMatchObject({ attempt: 1, error: { code: 'HTTP_503', status: 503, message: '' }, sealed: { alg: 'aes-256-gcm' } });
    expect(stored.join('\n')).not.toContain(secret);
    expect((agent.events.find((e) => e.type === 'request/error')!.data as { error: { message: string } }).error.message).toBe(`rejected: ${secret}`);
  });
});
