import { describe, expect, it } from 'vitest';
import { attributedSession, verifyInCode } from './audit-usage.js';

describe('docs/audit.md snippets run', () => {
  it('an attributed, signed session verifies with its public key; its input carries the actor', async () => {
    const { store, publicKeyPem } = await attributedSession();
    const verdict = await verifyInCode(store, publicKeyPem);
    expect(verdict).toMatchObject({ ok: true, status: 'verified', signatures: { problem: null } });
    const events = [];
    for await (const e of store.read('case-1182')) events.push(e);
    expect(events.find((e) => e.type === 'agent/inbox/spliced')!.metadata).toEqual({ actor: 'user:ana@example.org', correlationId: 'ticket-1182' });
    expect(events.at(-1)!.type).toBe('chain/head');
  });
});
