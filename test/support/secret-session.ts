import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { createUserMessage } from '../../domain/message.js';
import type { EncryptionOptions } from '../../runtime/content-sealer.js';
import { silentLogger } from '../../runtime/logger.js';
import { sequentialIds, steppingClock } from '../../runtime/ports/clock.js';
import type { EventStore } from '../../runtime/ports/event-store.js';
import type { HeadSigner } from '../../runtime/ports/head-signer.js';
import { createRuntime } from '../../runtime/runtime.js';

/** Distinctive plaintext that must never be found in a store (or its key files) when encryption is on. */
export const SECRETS = {
  prompt: 'PROMPT-SECRET-7f3a9c',
  steer: 'STEER-SECRET-51be02',
  queued: 'QUEUED-SECRET-c0ffee',
  args: 'ARGS-SECRET-9d14e7',
  result: 'RESULT-SECRET-2b8f61',
  answer: 'ANSWER-SECRET-e4a0d3',
} as const;

/**
 * One session that carries a secret in every kind of payload: a prompt from `user:ana` (her own key with
 * `perActor`), a steer from inside a tool body, a tool call's arguments, its result, the model's answer, and a
 * follow-up still queued at the end (never run: the session is disposed while it waits). Ids and clock are
 * deterministic: with and without encryption the events differ only in their content fields. With a `signer`, the
 * runtime signs a chain/head at every full checkpoint (the log then ends with one).
 */
export const writeSecretSession = async (store: EventStore, sessionId: string, encryption?: EncryptionOptions, signer?: HeadSigner): Promise<void> => {
  const runtime = createRuntime({
    store,
    model: new ScriptedModel([
      { toolCalls: [{ callId: 'call-1', name: 'lookup', arguments: { q: SECRETS.args } }] },
      `done: ${SECRETS.answer}`,
    ]),
    tools: [
      {
        name: 'lookup',
        execute: (_args, { agent }) => {
          agent.steer(createUserMessage(SECRETS.steer, { kind: 'user' }, { newId: () => 'msg-steer' }));
          return { content: SECRETS.result };
        },
      },
    ],
    clock: steppingClock(),
    ids: sequentialIds(),
    logger: silentLogger,
    writeBatchDelayMs: 0,
    ...(encryption ? { encryption } : {}),
    ...(signer ? { signer } : {}),
  });
  const agent = runtime.createSession({ sessionId, metadata: { actor: 'svc:helpdesk' } });
  agent.followup(createUserMessage(SECRETS.prompt, { kind: 'user' }, { newId: () => 'msg-prompt' }), { metadata: { actor: 'user:ana' } });
  await agent.whenIdle();
  // queued without waking: still pending at the end of the log
  agent.send(createUserMessage(SECRETS.queued, { kind: 'user' }, { newId: () => 'msg-queued' }), 'next-turn', false, { metadata: { actor: 'user:bob' } });
  // durable, not disposed (disposing would cancel the queued input): the store keeps it pending
  await agent.checkpoint();
};
