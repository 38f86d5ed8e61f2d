import { describe, expect, it } from 'vitest';
import { verifySession } from '../../../formats/chain/verify-session.js';
import { chainedSession } from '../../support/chained-session.js';

/**
 * A hash that is not 64 lowercase hex digits makes its event unreadable, whatever else is wrong with it. The verifier
 * checks the digits only when a link does not hold (a hash equal to the recomputed one is well formed), so these
 * cases pin that the deferred check gives the same verdicts as checking every event's digits first.
 */
describe('verify: a malformed hash is unreadable, before any broken link', () => {
  const raws = async () => (await chainedSession('s-hex')).map((e) => JSON.parse(JSON.stringify(e)) as Record<string, unknown>);

  it('the untouched log verifies', async () => {
    const v = await verifySession('s-hex', await raws());
    expect(v.status).toBe('verified');
    expect(v.break).toBeNull();
  });

  it.each([
    ['upper-case digits', (h: string) => h.toUpperCase()],
    ['a non-hex letter', (h: string) => `g${h.slice(1)}`],
    ['63 digits', (h: string) => h.slice(1)],
    ['65 digits', (h: string) => `${h}0`],
  ])('%s at seq 3: unreadable at 3', async (_, mangle) => {
    const log = await raws();
    log[3]!.hash = mangle(log[3]!.hash as string);
    const v = await verifySession('s-hex', log);
    expect(v.status).toBe('unreadable');
    expect(v.break).toEqual({ kind: 'unreadable', seq: 3, reason: 'hash is not 64 hex digits' });
    expect(v.chained).toBe(3);
  });

  it('a malformed hash on an event out of place is unreadable, not a seq mismatch', async () => {
    const log = await raws();
    const moved = log.splice(3, 1)[0]!;
    log.splice(5, 0, moved);
    // the event now at position 3 carries seq 4 (a seq mismatch) and a malformed hash
    log[3]!.hash = (log[3]!.hash as string).toUpperCase();
    const v = await verifySession('s-hex', log);
    expect(v.break).toEqual({ kind: 'unreadable', seq: 3, reason: 'hash is not 64 hex digits' });
  });

  it('a well-formed wrong hash is a hash mismatch naming both', async () => {
    const log = await raws();
    const found = 'f'.repeat(64);
    const expected = log[4]!.hash;
    log[4]!.hash = found;
    const v = await verifySession('s-hex', log);
    expect(v.status).toBe('broken');
    expect(v.break).toEqual({ kind: 'hash-mismatch', seq: 4, expected, found });
  });
});
