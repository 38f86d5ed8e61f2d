import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../domain/events.js';
import { arrayLogSource, auditSession, createSessionAuditCache, type AuditLogSource } from '../../host/session-audit.js';

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

/** A log read by range that counts the events it hands out. */
const countingSource = (log: readonly LogEvent[]): AuditLogSource & { read_: () => number } => {
  let read = 0;
  const inner = arrayLogSource(log);
  return {
    lastSeq: inner.lastSeq,
    read_: () => read,
    async *read(from, to) {
      for await (const page of inner.read(from, to)) {
        read += page.length;
        yield page;
      }
    },
  };
};

describe('the console audit cache over a log read by range', () => {
  it('answers as a fresh fold does, reading only the events its folds have not passed (and the last one they did)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -1, max: events.length + 2 }), { minLength: 1, maxLength: 8 }), async (ats) => {
        const cache = createSessionAuditCache({ yieldEvery: 3 });
        let pos = -1;
        for (const at of ats) {
          const source = countingSource(events);
          const got = await cache.auditLog('s', source, { at, messageId: 'B' });
          expect(got).toEqual(await auditSession('s', events, { at, messageId: 'B' }));
          const clamped = Math.max(-1, Math.min(events.length - 1, at));
          // forwards: the one event checked and the new ones; backwards: a fold from the start
          expect(source.read_()).toBe(clamped >= pos ? (pos >= 0 ? 1 : 0) + clamped - pos : clamped + 1);
          pos = clamped;
        }
      }),
      { numRuns: 40 },
    );
  });

  it('keeps the folds of the sessions asked last within its event budget, the last one always', async () => {
    const cache = createSessionAuditCache({ events: events.length + 5 });
    await cache.auditLog('a', countingSource(events));
    await cache.auditLog('b', countingSource(events));
    // a and b together pass the budget: a's folds were dropped, b's (asked last) kept
    const a = countingSource(events);
    expect(await cache.auditLog('a', a)).toEqual(await auditSession('a', events));
    expect(a.read_()).toBe(events.length);
    const again = countingSource(events);
    await cache.auditLog('a', again);
    expect(again.read_()).toBe(1);
    // within the budget both are kept
    const roomy = createSessionAuditCache({ events: 2 * events.length });
    await roomy.auditLog('a', countingSource(events));
    await roomy.auditLog('b', countingSource(events));
    const kept = countingSource(events);
    await roomy.auditLog('a', kept);
    expect(kept.read_()).toBe(1);
  });
});
