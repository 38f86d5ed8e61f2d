import { describe, expect, it } from 'vitest';
import { verifySession, envelopeOfRecorded } from '../../index.js';
import { erasedSession } from './erasure-usage.js';

describe('docs/audit.md erasure snippets run', () => {
  it('the session reads in clear with its keys, reads [erased] after erasure, and still verifies', async () => {
    const { store, before, after } = await erasedSession();
    const text = (es: readonly unknown[]) => JSON.stringify(es);
    expect(text(before)).toContain('12 Elm Street');
    expect(text(after)).not.toContain('12 Elm Street');
    expect(after.find((e) => e.type === 'user/message')!.data).toMatchObject({ content: [{ type: 'text', text: '[erased]' }], sealed: { state: 'erased' } });
    expect(after.at(-1)).toMatchObject({ type: 'session/erased', metadata: { actor: 'dpo:eve' }, data: { scope: 'session', subject: 'case-2210' } });
    const stored = [];
    for await (const e of store.read('case-2210')) stored.push(envelopeOfRecorded(e));
    expect(text(stored)).not.toContain('12 Elm Street');
    expect((await verifySession('case-2210', (async function* () { yield* stored; })())).status).toBe('verified');
  });
});
