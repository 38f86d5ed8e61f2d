import { generateKeyPairSync } from 'node:crypto';
import {
  createRuntime,
  createUserMessage,
  ed25519Signer,
  ed25519Verifier,
  MemoryEventStore,
  ScriptedModel,
  verifySession,
  envelopeOfRecorded,
  type EventStore,
  type SessionVerification,
} from '../../index.js';

/** Runs one attributed, signed session and returns its store (the regions below are quoted in docs/audit.md). */
export const attributedSession = async (): Promise<{ store: EventStore; publicKeyPem: string }> => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // #region signed-runtime
  const store = new MemoryEventStore();
  const runtime = createRuntime({
    store,
    model: new ScriptedModel(['Refund approved for order 1182.']),
    signer: ed25519Signer(privateKey), // a chain/head signed at every checkpoint
  });
  // the host passes who it authenticated; the runtime adds causation to what it derives
  const agent = runtime.createSession({ sessionId: 'case-1182', metadata: { actor: 'svc:helpdesk' } });
  agent.followup(createUserMessage('Refund order 1182'), {
    metadata: { actor: 'user:ana@example.org', correlationId: 'ticket-1182' },
  });
  await agent.whenIdle();
  await agent.dispose(); // drains the log and signs its head
  // #endregion signed-runtime
  return { store, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};

/** Verifies a stored session's chain and signatures in code (what `steerlog verify --pubkey` does). */
export const verifyInCode = async (store: EventStore, publicKeyPem: string): Promise<SessionVerification> => {
  // #region verify-in-code
  const events = (async function* () {
    for await (const e of store.read('case-1182')) yield envelopeOfRecorded(e);
  })();
  const verdict = await verifySession('case-1182', events, { verifiers: [ed25519Verifier(publicKeyPem)] });
  if (!verdict.ok) throw new Error(`case-1182 does not verify: ${JSON.stringify(verdict.break ?? verdict.signatures?.problem)}`);
  // verdict.head = { seq, hash }: keep it outside the store (a ticket, a WORM bucket) to detect a cut tail later
  // #endregion verify-in-code
  return verdict;
};
