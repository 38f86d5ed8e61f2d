import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { auditSession, createSessionAuditCache } from '../../host/session-audit.js';

const events = readFileSync(fileURLToPath(new URL('../../docs/examples/inbox-edits.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as LogEvent);

describe('the console audit cache', () => {
  it('answers every sequence of seqs (forwards, backwards, concurrently) exactly as a fresh fold does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -1, max: events.length + 2 }), { minLength: 1, maxLength: 8 }), fc.boolean(), async (ats, concurrent) => {
        const cache = createSessionAuditCache({ yieldEvery: 3 });
        const ask = (at: number) => cache.audit('s', events, { at, messageId: 'B' });
        const answers = concurrent ? await Promise.all(ats.map(ask)) : await ats.reduce<Promise<unknown[]>>(async (acc, at) => [...(await acc), await ask(at)], Promise.resolve([]));
        expect(answers).toEqual(await Promise.all(ats.map((at) => auditSession('s', events, { at, messageId: 'B' }))));
      }),
      { numRuns: 40 },
    );
  });

  it('folds again when the log under it is another log', async () => {
    const cache = createSessionAuditCache();
    await cache.audit('s', events);
    const other = events.map((e, i) => (i === events.length - 1 ? ({ ...e, id: 'another' } as unknown as LogEvent) : e));
    expect(await cache.audit('s', other)).toEqual(await auditSession('s', other));
  });
});
