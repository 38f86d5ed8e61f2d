import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ed25519Signer } from '../../formats/chain/ed25519.js';
import { ScriptedModel } from '../../adapters/model/scripted/scripted-model.js';
import { MemoryEventStore } from '../../adapters/store/memory/memory-event-store.js';
import type { LogEvent } from '../../domain/events.js';
import { steppingClock, sequentialIds } from '../../runtime/ports/clock.js';
import type { NewEvent } from '../../runtime/ports/event-store.js';
import { newEventOf } from '../../runtime/ports/recorded-envelope.js';
import { silentLogger } from '../../runtime/logger.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { HeadSigner } from '../../runtime/ports/head-signer.js';
import { msg } from './log-builder.js';

/** A fresh Ed25519 key pair for tests. */
export const testKeys = (): { privateKey: KeyObject; publicKey: KeyObject } => generateKeyPairSync('ed25519');

/**
 * A small but complete session written by the runtime (deterministic ids and clock): a follow-up with an actor,
 * a tool call whose result stages context, a steer, a second follow-up. Returns the live log (with hashes).
 */
export const chainedSession = async (sessionId: string, options: { readonly signer?: HeadSigner } = {}): Promise<readonly LogEvent[]> => {
  const runtime = createRuntime({
    store: new MemoryEventStore(),
    model: new ScriptedModel([{ toolCalls: [{ callId: 'c1', name: 'look' }] }, 'looked', 'done']),
    tools: [{ name: 'look', execute: () => ({ content: 'seen', additionalContexts: [msg('ctx-1', 'context from look', { kind: 'plugin', plugin: 'p' })] }) }],
    clock: steppingClock(1_700_000_000_000, 10),
    ids: sequentialIds(7),
    logger: silentLogger,
    writeBatchDelayMs: 1,
    ...(options.signer ? { signer: options.signer } : {}),
  });
  const agent = runtime.createSession({ sessionId, metadata: { actor: 'user:ana', correlationId: 'conv-1' } });
  agent.followup(msg('m1', 'find it'), { metadata: { actor: 'user:ana', ticket: { id: 42 } } });
  await agent.whenIdle();
  await agent.checkpoint();
  agent.followup(msg('m2', 'and then?'), { metadata: { actor: 'service:bot' } });
  await agent.whenIdle();
  await agent.dispose();
  return agent.events;
};

/** The events as a writer hands them to a store. */
export const asNewEvents = (events: readonly LogEvent[]): NewEvent[] => events.map(newEventOf);

/** A signer on a fresh key, with its public key. */
export const testSigner = (): { signer: HeadSigner; publicKey: KeyObject; privateKey: KeyObject } => {
  const { privateKey, publicKey } = testKeys();
  return { signer: ed25519Signer(privateKey), publicKey, privateKey };
};
