import { afterEach, describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../adapters/keys/memory-key-store.js';
import { MemoryEventStore } from '../../../adapters/store/memory/memory-event-store.js';
import { auditOutput } from '../../../audit/audit-extras.js';
import { auditLog } from '../../../audit/audit-log.js';
import { storeSource } from '../../../audit/log-source.js';
import type { SessionAudit } from '../../../host/session-audit.js';
import { createKeyring } from '../../../runtime/content-opener.js';
import { createRuntime } from '../../../runtime/runtime.js';
import { startTestHost, type TestHost } from './http-support.js';

let host: TestHost | null = null;
afterEach(async () => {
  await host?.close();
  host = null;
});

/**
 * A host that seals content: its live events hold the text, the store the ciphertext the hash chain covers. The
 * console's audit reads the envelopes as stored, so its chain verifies and it is the object `audit --store … --json`
 * prints (the use case `auditLog` with the same data keys); the previews are opened with the keys.
 */
describe('the console audit of a host that seals content', () => {
  it('verifies the chain over the stored form and equals the audit use case; previews are opened', async () => {
    const keys = new MemoryKeyStore();
    const store = new MemoryEventStore();
    host = await startTestHost({ store, runtime: (o) => createRuntime({ ...o, encryption: { keys } }), http: { console: { keys } } });
    host.model.releaseAll();
    expect((await host.rpc('session.create', { sessionId: 'sealed-1' })).result.ok).toBe(true);
    for (const i of [0, 1]) {
      const r = await host.rpc('session.prompt', { sessionId: 'sealed-1', mode: 'queue', content: [{ type: 'text', text: `secret p${i}` }], messageId: `m${i}`, durable: true });
      expect(r.result.ok).toBe(true);
    }
    const agent = host.host.live.get('sealed-1')!.agent;
    await agent.whenIdle();
    await agent.checkpoint();
    const res = await fetch(`${host.url}/api/audit/sealed-1?output=audit`);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as SessionAudit;
    expect(answer.chain.status).toBe('verified');
    expect(answer.chain.chained).toBe(agent.events.length);
    const audited = (await auditLog(storeSource(store, 'sealed-1'), { keyring: createKeyring(keys) }))!;
    expect(answer.audit).toEqual(JSON.parse(JSON.stringify(auditOutput(audited.report, audited.extras!, null))));
    expect(answer.inputs.map((i) => [i.id, i.preview])).toEqual([
      ['m0', expect.stringContaining('secret p0')],
      ['m1', expect.stringContaining('secret p1')],
    ]);
  });
});
